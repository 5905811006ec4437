import { useEffect, useState } from "preact/hooks";

/**
 * Pages are addressed by the URL's fragment (#/paymasters/<id>/rules), so the service serves one page and the back
 * button works. Nothing secret is ever put in it: the Referer is off anyway, and the token lives in session storage.
 */
export function useRoute(): string[] {
  const read = () => location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  const [parts, setParts] = useState(read);
  useEffect(() => {
    const changed = () => setParts(read());
    addEventListener("hashchange", changed);
    return () => removeEventListener("hashchange", changed);
  }, []);
  return parts;
}

export const href = (...parts: string[]) => `#/${parts.map(encodeURIComponent).join("/")}`;
