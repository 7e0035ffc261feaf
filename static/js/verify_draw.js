// Recomputes the draw commitment in the browser (L-ASSIGN-3): SHA-256 of the UTF-8 bytes of the canonical text.
(async () => {
  const text = document.getElementById("canonical")?.textContent;
  const out = document.getElementById("browser");
  if (!text || !out || !window.crypto?.subtle) return;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  out.textContent = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
  const verdict = document.getElementById("browser-verdict");
  const published = document.getElementById("published")?.textContent.trim();
  if (verdict) {
    const ok = out.textContent === published;
    verdict.textContent = "— " + (ok ? verdict.dataset.match : verdict.dataset.mismatch);
    verdict.className = ok ? "ok" : "error";
    verdict.dataset.verified = ok ? "yes" : "no";
  }
})();
