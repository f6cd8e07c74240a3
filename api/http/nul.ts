import { ApiError } from '../platform/errors'

// Postgres text cannot hold U+0000: a NUL that reached a query would fail there as a 500. It is refused on arrival,
// naming the field, like any other value the schema does not admit.
const refuse = (path: string) =>
  new ApiError('VALIDATION_ERROR', `${path} contains a NUL character`, { errors: [{ path, message: 'must not contain NUL (U+0000) characters' }] })

/** Throws for the first string (or key) of a parsed JSON body that holds a NUL. */
export function refuseNulInBody(value: unknown, path = 'body'): void {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) throw refuse(path)
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => {
      refuseNulInBody(v, `${path}.${i}`)
    })
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\u0000')) throw refuse(path)
      refuseNulInBody(v, `${path}.${k}`)
    }
  }
}

/** Throws when the path or a query parameter of the URL carries an encoded NUL (%00). */
export function refuseNulInUrl(url: string): void {
  if (!/%00/.test(url)) return
  const u = new URL(url)
  for (const [k, v] of u.searchParams) if (k.includes('\u0000') || v.includes('\u0000')) throw refuse(`query.${k.replaceAll('\u0000', '')}`)
  throw refuse('path')
}
