// How a URL the server fetches (a manifest, a JWKS) is shown in logs, errors, `/healthz` and help:
// without credentials and without its query string, either of which may hold a secret.

/** `url` as a log or a caller may be shown it: its origin and path only. */
export function displayUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}
