import { collectDefaultMetrics, Registry } from 'prom-client'
import type { Logger } from './log'

/** One registry per process role (api, worker), never prom-client's global one: tests start several apps in one
 *  process, and each must count only its own requests. */
export function processRegistry(service: 'api' | 'worker'): Registry {
  const registry = new Registry()
  registry.setDefaultLabels({ service })
  collectDefaultMetrics({ register: registry, prefix: 'rcp_' })
  return registry
}

export interface MetricsListener {
  url: string
  stop(): Promise<void>
}

/** The scrape endpoint, on its own listener (loopback by default) so the public port never serves it. `extra` adds
 *  text another exporter produced (the Temporal SDK's), scraped in the same request. */
export function serveMetrics(registry: Registry, opts: { host: string; port: number; log: Logger; extra?: () => Promise<string> }): MetricsListener {
  const server = Bun.serve({
    hostname: opts.host,
    port: opts.port,
    async fetch(request) {
      if (new URL(request.url).pathname !== '/metrics' || request.method !== 'GET') return new Response('Not found\n', { status: 404 })
      const own = await registry.metrics()
      const extra = opts.extra
        ? await opts.extra().catch((err: unknown) => {
            opts.log.warn('extra metrics unavailable', { err })
            return ''
          })
        : ''
      return new Response(own + extra, { headers: { 'content-type': registry.contentType } })
    },
  })
  const url = `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${server.port}/metrics`
  opts.log.info('metrics listening', { url })
  return { url, stop: () => server.stop(true) }
}
