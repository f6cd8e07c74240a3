/** A static file of one of our pages (the account page, the API reference, the console), with the page's CSP and the
 *  headers every such response carries. The file is opened once; Bun streams it anew for each response. */
export const staticAsset = (file: string, type: string, cache: string, csp: string) => {
  const body = Bun.file(file)
  return () => new Response(body, {
    headers: { 'content-type': type, 'cache-control': cache, 'content-security-policy': csp, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' },
  })
}

export const HTML = 'text/html; charset=utf-8'
export const JS = 'text/javascript; charset=utf-8'
export const CSS = 'text/css; charset=utf-8'
