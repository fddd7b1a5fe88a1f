// Masking credentials in logged URLs by what a parameter is, not by how its name is spelled: an
// attacker (or a client) may send `SS-Password`, `ss_password[]`, `SS%252DPassword` or `ＳＳ-Password`,
// and none of them may reach a log.

export const MASK = '********'

/** Names that, reduced to lowercase letters and digits, say they carry a credential. */
const CREDENTIAL_NAME = /pass|pwd|secret|token|apikey|accesskey|auth|credential|username|signature|session|cookie|hmac|^key$|key$|^sig$|sig$/

/** A parameter name decoded (percent escapes, up to three layers, and `+`), folded and reduced to [a-z0-9]. */
export function normalizedParameterName(rawName: string): string {
  let name = rawName.replaceAll('+', ' ')
  for (let layer = 0; layer < 3 && /%[0-9a-f]{2}/i.test(name); layer++) {
    // Escape by escape, so one malformed escape leaves the others decoded.
    name = name.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
      try {
        return decodeURIComponent(run)
      } catch {
        return run.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
      }
    })
  }
  return name.normalize('NFKC').toLowerCase().replace(/[^a-z0-9]/g, '')
}

export const looksLikeCredential = (rawName: string) => CREDENTIAL_NAME.test(normalizedParameterName(rawName))

/** The URL with the value of every credential-like query parameter masked (the name is kept). */
export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?')
  if (queryStart === -1) return url
  const pairs = url
    .slice(queryStart + 1)
    .split('&')
    .map((pair) => {
      const rawName = pair.split('=', 1)[0]
      return looksLikeCredential(rawName) ? `${rawName}=${MASK}` : pair
    })
  return `${url.slice(0, queryStart + 1)}${pairs.join('&')}`
}

/** A request serializer for route `logSerializers`: the request line with credentials masked. */
export const redactedRequest = (request: { method: string; url: string; host: string; ip: string }) => ({
  method: request.method,
  url: redactUrl(request.url),
  host: request.host,
  remoteAddress: request.ip,
})
