// Small shared pieces: a loader hook with the states every page shows, and their views.
import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useState } from 'preact/hooks'
import { asProblem, type Problem, ProblemMessage } from './problem'

export type Loaded<T> =
  | { state: 'loading' }
  | { state: 'error'; problem: Problem }
  | { state: 'ready'; value: T }

/** Runs `load` when `key` changes (and on reload()); a stale answer never overwrites a newer one. */
export function useLoad<T>(load: () => Promise<T>, key: unknown[]): [Loaded<T>, () => void] {
  const [result, setResult] = useState<Loaded<T>>({ state: 'loading' })
  const [tick, setTick] = useState(0)
  useEffect(() => {
    let current = true
    setResult((r) => (r.state === 'ready' ? r : { state: 'loading' }))
    load().then(
      (value) => { if (current) setResult({ state: 'ready', value }) },
      (err) => { if (current) setResult({ state: 'error', problem: asProblem(err) }) },
    )
    return () => { current = false }
  }, [...key, tick])
  return [result, useCallback(() => setTick((t) => t + 1), [])]
}

/** Loading, error (the problem's message, or the forbidden state) or the content. */
export function Show<T>({ loaded, children }: { loaded: Loaded<T>; children: (value: T) => ComponentChildren }) {
  if (loaded.state === 'loading') return <p class="loading" role="status">Loading…</p>
  if (loaded.state === 'error') return <ProblemMessage problem={loaded.problem} />
  return <>{children(loaded.value)}</>
}

export const Empty = ({ children }: { children: ComponentChildren }) => <p class="empty">{children}</p>

/** An action's own state: busy while it runs, its problem if it fails. */
export function useAction(): [{ busy: boolean; problem: Problem | null }, (action: () => Promise<void>) => Promise<void>] {
  const [state, setState] = useState<{ busy: boolean; problem: Problem | null }>({ busy: false, problem: null })
  const run = useCallback(async (action: () => Promise<void>) => {
    setState({ busy: true, problem: null })
    try {
      await action()
      setState({ busy: false, problem: null })
    } catch (err) {
      setState({ busy: false, problem: asProblem(err) })
    }
  }, [])
  return [state, run]
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—')

/** A secret the server answers once (a token, a signing secret): shown with a copy button until dismissed, held by
 *  this component alone, never stored. */
export function OnceSecret({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false)
  const copy = async () => {
    await navigator.clipboard.writeText(value)
    setCopied(true)
  }
  return (
    <div class="secret" role="region" aria-label={label}>
      <p><strong>Copy it now: it is shown once and never again.</strong></p>
      <p><code class="once">{value}</code></p>
      <button type="button" onClick={copy}>Copy</button>{' '}
      <button type="button" onClick={onDone}>Done</button>
      {copied && <p role="status" class="ok">Copied to the clipboard.</p>}
    </div>
  )
}
