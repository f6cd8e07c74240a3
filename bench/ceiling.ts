// The ceiling every HTTP benchmark is read against: a bare Elysia hello-world in a process of its own, no hooks, no
// plugins, nothing of ours. `PORT=3999 bun bench/ceiling.ts`; bench/harness.ts starts it beside the API.
import { Elysia } from 'elysia'

new Elysia().get('/', () => 'hello').listen({ hostname: '127.0.0.1', port: Number(process.env.PORT ?? 3999) })
