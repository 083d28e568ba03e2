/** URLs fit for messages and logs: no credentials, no secret query values. Pure. */

const SECRET_PARAM = /(key|token|secret|password|passwd|signature|sig|auth|credential|session)/i;

/**
 * The URL with user info removed and the values of secret-looking query parameters (`api_key`, `access_token`,
 * `X-Amz-Signature`, `X-Amz-Credential`, `X-Amz-Security-Token`, …) replaced by `***`; other parameters stay, so a
 * message still says which page was asked for.
 */
export function redactUrl(url: string): string {
  let clean = url;
  const scheme = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#@]*@)/i.exec(url);
  if (scheme) clean = scheme[1]! + url.slice(scheme[0].length);
  const q = clean.indexOf('?');
  if (q === -1) return clean;
  const query = clean
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq === -1) return pair;
      let name = pair.slice(0, eq);
      try {
        name = decodeURIComponent(name);
      } catch {
        // keep the raw name
      }
      return SECRET_PARAM.test(name) ? `${pair.slice(0, eq)}=***` : pair;
    })
    .join('&');
  return `${clean.slice(0, q)}?${query}`;
}
