// Starts Swagger UI on our own document. validatorUrl null: otherwise it sends the document to validator.swagger.io.
// deepLinking off: it puts a link inside each operation's toggle button (a focusable element nested in another).
// The servers picker is left out: the document names one server, this origin, and the picker has no label.
const oneServer = { wrapComponents: { ServersContainer: () => () => null } }
window.ui = window.SwaggerUIBundle({
  url: '/v1/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: false,
  validatorUrl: null,
  presets: [window.SwaggerUIBundle.presets.apis],
  plugins: [() => oneServer],
  layout: 'BaseLayout',
})
