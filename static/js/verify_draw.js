// Recomputes the draw commitment in the browser (L-ASSIGN-3): SHA-256 of the UTF-8 bytes of the canonical text.
(async () => {
  const text = document.getElementById("canonical")?.textContent;
  const out = document.getElementById("browser");
  if (!text || !out || !window.crypto?.subtle) return;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  out.textContent = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
})();
