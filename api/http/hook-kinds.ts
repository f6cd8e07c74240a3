// Elysia guesses from a hook's source text whether it may return a promise (any `return f(` or `=> f(` counts, in
// the code Bun's transpiler produced) and awaits it if so. A needless await on a request or error hook makes every
// route async; a missed one would let a promise through unawaited. So these hooks say which they are, in the field
// where Elysia caches its guess. Elysia documents no way to declare this (only an `async` function reads as async,
// and that costs a promise per call), so this file is the one place that writes Elysia's internal HookContainer
// field; test/http/hook-kinds.test.ts fails when an upgrade changes how Elysia reads it.

/** The Elysia release whose compose.ts (`isAsync`: a container's own `isAsync` wins over the source-text guess) this
 *  file was checked against. */
export const CHECKED_WITH_ELYSIA = '1.4.30'

/** Never returns a promise. */
export const sync = <F extends (...args: never[]) => unknown>(fn: F): F => ({ fn, isAsync: false }) as unknown as F

/** May return a promise. Typed as returning nothing because Elysia's types say so of a transform, though it merges
 *  what one returns into the context. */
export const awaited = <C>(fn: (ctx: C) => unknown) => ({ fn, isAsync: true }) as unknown as (ctx: C) => void

/** Never returns a promise, and what it returns is merged into the context (typed as nothing, as for `awaited`). */
export const syncMerging = <C>(fn: (ctx: C) => unknown) => ({ fn, isAsync: false }) as unknown as (ctx: C) => void
