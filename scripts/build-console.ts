/**
 * Builds the console (api/console/ui → api/console/dist), run by scripts/bootstrap.sh (so by ./scripts/up and
 * ./scripts/test) and by the Dockerfile; nothing it writes is committed:
 *   1. the OpenAPI document, read from the app in-process (no server, no database: the document needs neither);
 *   2. api/console/ui/api-types.gen.ts from it (openapi-typescript, through scripts/api-types.ts: the generator the
 *      TypeScript SDK's committed types come from too), which the type check reads, so a changed response shape fails
 *      `tsc`;
 *   3. the browser bundle and stylesheet (Bun's bundler, minified, hashed names) and the index.html naming them.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { gzipSync } from 'node:zlib'
import type { OpenAPI3 } from 'openapi-typescript'
import { apiTypes, CONSOLE_HEADER, openapiDocument } from './api-types'

const ROOT = join(import.meta.dir, '..')
export const CONSOLE = join(ROOT, 'api', 'console')
export const UI = join(CONSOLE, 'ui')
export const DIST = join(CONSOLE, 'dist')
export const TYPES_FILE = join(UI, 'api-types.gen.ts')
const DOC_FILE = join(ROOT, '.cache', 'console', 'openapi.json')

export { openapiDocument }

/** The console's copy of the generated types: the one generator (scripts/api-types.ts), the console's header. */
export async function writeApiTypes(doc: OpenAPI3, file: string): Promise<void> {
  writeFileSync(file, await apiTypes(doc, CONSOLE_HEADER))
}

/** The bundle and stylesheet under hashed names, and the index page naming them. Returns the gzip size of the
 *  script a first load fetches. */
export async function bundle(outdir = DIST): Promise<{ script: string; gzipBytes: number }> {
  rmSync(outdir, { recursive: true, force: true })
  const result = await Bun.build({
    entrypoints: [join(UI, 'main.tsx')],
    outdir: join(outdir, 'assets'),
    target: 'browser',
    minify: true,
    naming: { entry: '[name]-[hash].[ext]', asset: '[name]-[hash].[ext]', chunk: '[name]-[hash].[ext]' },
    define: { 'process.env.NODE_ENV': '"production"' },
  })
  if (!result.success) throw new AggregateError(result.logs, 'console build failed')
  const js = result.outputs.find((o) => o.path.endsWith('.js'))
  const css = result.outputs.find((o) => o.path.endsWith('.css'))
  if (!js || !css) throw new Error('console build made no script or no stylesheet')
  const script = basename(js.path)
  writeFileSync(join(outdir, 'index.html'), indexHtml(script, basename(css.path)))
  return { script, gzipBytes: gzipSync(await js.arrayBuffer()).length }
}

const indexHtml = (script: string, css: string) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Console · Robot Control Plane</title>
  <link rel="stylesheet" href="/console/assets/${css}">
  <link rel="preload" href="/v1/sessions/current" as="fetch" crossorigin="anonymous">
  <link rel="preload" href="/v1/users/me" as="fetch" crossorigin="anonymous">
  <script type="module" src="/console/assets/${script}"></script>
</head>
<body>
  <div id="app"><main><h1>Robot Control Plane</h1><p>Loading the console…</p></main></div>
</body>
</html>
`

if (import.meta.main) {
  const doc = await openapiDocument()
  mkdirSync(join(DOC_FILE, '..'), { recursive: true })
  writeFileSync(DOC_FILE, JSON.stringify(doc))
  await writeApiTypes(doc, TYPES_FILE)
  const { script, gzipBytes } = await bundle()
  console.error(`[setup] console built: ${script}, ${(gzipBytes / 1024).toFixed(1)} KiB gzip`)
  process.exit(0) // the app's timers (rate limiter sweeps) would keep the process alive
}
