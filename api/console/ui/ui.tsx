// Small shared pieces: a loader hook with the states every page shows, and their views.
import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useState } from 'preact/hooks'
import { asProblem, type Problem, ProblemMessage } from './problem'

export type Loaded<T> = { state: 'loading' } | { state: 'error'; problem: Problem } | { state: 'ready'; value: T }

/** Runs `load` when `key` changes (and on reload()); a stale answer never overwrites a newer one. */
export function useLoad<T>(load: () => Promise<T>, key: unknown[]): [Loaded<T>, () => void] {
  const [result, setResult] = useState<Loaded<T>>({ state: 'loading' })
  const [tick, setTick] = useState(0)
  useEffect(() => {
    let current = true
    setResult((r) => (r.state === 'ready' ? r : { state: 'loading' }))
    load().then(
      (value) => {
        if (current) setResult({ state: 'ready', value })
      },
      (err) => {
        if (current) setResult({ state: 'error', problem: asProblem(err) })
      },
    )
    return () => {
      current = false
    }
  }, [...key, tick])
  return [result, useCallback(() => setTick((t) => t + 1), [])]
}

/** Reloads every second while `busy` holds: progress of work the worker does. */
export function usePoll(busy: boolean, reload: () => void) {
  useEffect(() => {
    if (!busy) return
    const t = setInterval(reload, 1000)
    return () => clearInterval(t)
  }, [busy, reload])
}

/** Loading, error (the problem's message, or the forbidden state) or the content. */
export function Show<T>({ loaded, children }: { loaded: Loaded<T>; children: (value: T) => ComponentChildren }) {
  if (loaded.state === 'loading')
    return (
      <p class="loading" role="status">
        Loading…
      </p>
    )
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
  return (
    <div class="secret" role="region" aria-label={label}>
      <p>
        <strong>Copy it now: it is shown once and never again.</strong>
      </p>
      <p>
        <code class="once">{value}</code>
      </p>
      <CopyButton value={value} label="Copy" />{' '}
      <button type="button" onClick={onDone}>
        Done
      </button>
    </div>
  )
}

/** An action on a resource read with its ETag. A 412 (someone changed it since) is kept apart from other problems,
 *  and the resource reloaded so the next attempt starts from what it is now. */
export function useVersionedAction(
  reload: () => void,
): [{ busy: boolean; problem: Problem | null }, (change: () => Promise<void>) => Promise<void>, Problem | null] {
  const [action, run] = useAction()
  const [stale, setStale] = useState<Problem | null>(null)
  const guarded = useCallback(
    (change: () => Promise<void>) =>
      run(async () => {
        setStale(null)
        try {
          await change()
        } catch (err) {
          const problem = asProblem(err)
          if (problem.status !== 412) throw problem
          setStale(problem)
          reload()
        }
      }),
    [run, reload],
  )
  return [action, guarded, stale]
}

export function StaleNotice({ problem, what }: { problem: Problem | null; what: string }) {
  if (!problem) return null
  return (
    <div class="problem" role="alert">
      <p>
        <strong>{problem.message}</strong> The {what} changed meanwhile and is shown as it is now; make your change again.
      </p>
    </div>
  )
}

/** Copies a value a person must paste elsewhere (a secret, a DNS record, a redirect URI). `label` names what it
 *  copies and starts with the button's visible word, so both read alike. */
export function CopyButton({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState(false)
  return (
    <>
      <button
        type="button"
        aria-label={label}
        onClick={async () => {
          await navigator.clipboard.writeText(value)
          setCopied(true)
        }}
      >
        Copy
      </button>
      {copied && (
        <span role="status" class="ok">
          {' '}
          Copied to the clipboard.
        </span>
      )}
    </>
  )
}

/** Keyset paging over a server list: the tokens that led to the page shown (its own is the last), back to the first
 *  page whenever `reset` changes (a new search or filter). */
export function usePaging(reset: unknown[]) {
  const [tokens, setTokens] = useState<string[]>([])
  useEffect(() => setTokens([]), reset)
  const pager = (next: string | undefined) => (
    <div class="pager">
      <button type="button" disabled={tokens.length === 0} onClick={() => setTokens(tokens.slice(0, -1))}>
        Previous page
      </button>
      <button type="button" disabled={!next} onClick={() => setTokens([...tokens, next!])}>
        Next page
      </button>
    </div>
  )
  return { pageToken: tokens.at(-1), pager, restart: () => setTokens([]) }
}
