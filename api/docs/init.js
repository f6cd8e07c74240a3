// Starts Swagger UI on our own document. validatorUrl null: otherwise it sends the document to validator.swagger.io.
// deepLinking off: it puts a link inside each operation's toggle button (a focusable element nested in another).
// The servers picker is left out: the document names one server, this origin, and the picker has no label.
// The page lists operations by path, without tag groups: with tags, Swagger UI 5.35 showed our document's first tag
// group only, and of it only the first path (the document's first 96 paths render whole, its first 99 do not; found
// 2026-11-27 when the document reached 106 paths). test/console/docs.test.ts checks that every operation is on the
// page. The document itself keeps its tags.
const oneServer = { wrapComponents: { ServersContainer: () => () => null } }
const untagged = (res) => {
  if (!res.url.endsWith('/v1/openapi.json') || !res.body || !res.body.paths) return res
  for (const item of Object.values(res.body.paths)) for (const op of Object.values(item)) if (op && typeof op === 'object') delete op.tags
  res.text = JSON.stringify(res.body)
  res.data = res.text
  return res
}
window.ui = window.SwaggerUIBundle({
  url: '/v1/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: false,
  validatorUrl: null,
  presets: [window.SwaggerUIBundle.presets.apis],
  plugins: [() => oneServer],
  layout: 'BaseLayout',
  responseInterceptor: untagged,
})
