"""The bench server's statement counter (``mafia_site.settings.bench`` only): every response carries
``X-Bench-Statements``, the number of SQL statements the request ran (sessions and authentication included)."""
from django.db import connections


class StatementCountMiddleware:
    """Counts the statements run on every database connection while the request is handled."""

    header = "X-Bench-Statements"

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        count = 0

        def counter(execute, sql, params, many, context):
            nonlocal count
            count += 1
            return execute(sql, params, many, context)

        wrappers = []
        for alias in connections:
            connection = connections[alias]
            connection.execute_wrappers.append(counter)
            wrappers.append(connection)
        try:
            response = self.get_response(request)
        finally:
            for connection in wrappers:
                connection.execute_wrappers.remove(counter)
        response[self.header] = str(count)
        return response
