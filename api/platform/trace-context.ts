// The context manager a traced process registers with OpenTelemetry: the API's documented ContextManager interface
// over one AsyncLocalStorage, plus `enter`, which makes a context current for the rest of the running task and
// everything it awaits (AsyncLocalStorage.enterWith). The API enters each request's span from Elysia's documented
// onRequest hook, so the span is active through every later hook, the handler, its SQL and its workflow starts,
// without wrapping the handler (Elysia's wrap() is private). test/platform/traces.test.ts proves that concurrent
// requests each keep their own and that nothing reaches a request that did not enter one.
import { AsyncLocalStorage } from 'node:async_hooks'
import { ROOT_CONTEXT, type Context, type ContextManager } from '@opentelemetry/api'

export class RequestContextManager implements ContextManager {
  readonly #store = new AsyncLocalStorage<Context>()

  active(): Context {
    return this.#store.getStore() ?? ROOT_CONTEXT
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.#store.run(ctx, () => fn.apply(thisArg, args))
  }

  /** Functions only: an emitter passed here is returned as it is (no code of ours binds one). */
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target
    const manager = this
    return function (this: unknown, ...args: unknown[]) {
      return manager.with(ctx, () => (target as (...a: unknown[]) => unknown).apply(this, args))
    } as T
  }

  /** Makes `ctx` current for the rest of the running task and all it awaits. */
  enter(ctx: Context): void {
    this.#store.enterWith(ctx)
  }

  enable(): this {
    return this
  }

  disable(): this {
    this.#store.disable()
    return this
  }
}
