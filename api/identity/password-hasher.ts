// argon2id runs in a child process of the API, in a session of its own and at a lower CPU priority (nice 10). In the
// API's own thread pool a burst of sign-ins kept two hashes on the cores all the time, and the kernel charged them to
// the API's CPU share (its session's autogroup, or its cgroup): the event loop, having used its share on hashing, then
// waited behind every other process before it could answer a cached PAT read (issue 22's mixed load). A session of
// its own gives the hasher an autogroup of its own, so hashing no longer spends the event loop's share; where
// processes share a cgroup instead, the lower priority lets the event loop go first.
//
// Jobs and answers travel as lines of JSON over the child's stdin and stdout (Bun's IPC channel spun the child's
// main thread at 100% of a core). A password crosses that pipe and nothing else: the child writes no log. The child
// ends when its stdin closes, so it does not outlive the API.
//
// The child keeps this process alive only while it owes answers: it is unref'd when the last one arrives and ref'd
// again with the next job. Unref'd with a job in flight in a process that nothing else kept alive (a script, a test
// file awaiting a hash; not a listening API), Bun's event loop polled the pipe without sleeping: its main thread spun
// at a full core for as long as a hash was out, and on two cores the hashes ran at half speed (26 against 63 a second).
import type { Subprocess } from 'bun'
import { setPriority } from 'node:os'
import { join } from 'node:path'

// OWASP's minimum for argon2id: 19 MiB, 2 iterations, 1 lane. The default cost of new hashes, and the least a
// deployment outside tests may set (PASSWORD_HASH_MEMORY_KIB, PASSWORD_HASH_ITERATIONS).
export const ARGON2 = { algorithm: 'argon2id', memoryCost: 19_456, timeCost: 2 } as const

/** What a new hash costs; a verification takes its cost from the hash it checks. */
export interface HashCost {
  memoryCost: number
  timeCost: number
}

/** The hasher's nice value: where it shares a cgroup with the API, the event loop (0) gets about nine tenths of a
 *  core the two contend for. */
export const HASHER_NICE = 10

/** The child's allocator keeps the memory a verification freed for the next one instead of handing it back to the
 *  system. By default Bun's allocator (mimalloc) returns a hash's 19 MiB about 100 ms after it is freed, and the next
 *  hash faults all 4,870 pages in again and zeroes them: between sign-ins that arrive with gaps, 2-3 ms of CPU a
 *  verification (10%) that bare argon2id, hashing back to back, never pays (bench/README.md "Password sign-in"). The
 *  cost: the child holds one hash's memory per thread that has hashed (19 MiB each, at most its pool's size), which
 *  a burst of sign-ins would take anyway; it goes with the child. */
export const HASHER_ALLOCATOR = { MIMALLOC_PURGE_DELAY: '-1' } as const

export type HashJob = ({ op: 'hash'; password: string } & HashCost) | { op: 'verify'; password: string; hash: string }
export type HashAnswer = { id: number; ok: true; result: string | boolean } | { id: number; ok: false; error: string }

type Child = Subprocess<'pipe', 'pipe', 'inherit'>
type Pending = { job: HashJob; resolve: (v: string | boolean) => void; reject: (e: Error) => void; sent: number; to?: Child }

/** A job is sent again to a fresh child when the one it was sent to died first, at most this many times in all. */
const MAX_SENDS = 2

/** An answer line, or undefined for anything else the runtime may print on stdout. */
function answerOf(line: string): HashAnswer | undefined {
  try {
    const a = JSON.parse(line) as HashAnswer
    return typeof a?.id === 'number' ? a : undefined
  } catch {
    return undefined
  }
}

export class PasswordHasher {
  private child: Child | undefined
  private stopped = false
  private readonly pending = new Map<number, Pending>()
  private nextId = 0

  hash(password: string, cost: HashCost = ARGON2): Promise<string> {
    return this.run({ op: 'hash', password, memoryCost: cost.memoryCost, timeCost: cost.timeCost }) as Promise<string>
  }

  verify(password: string, hash: string): Promise<boolean> {
    return this.run({ op: 'verify', password, hash }) as Promise<boolean>
  }

  /** Ends the child (it also ends by itself when this process goes: its stdin closes). */
  stop(): void {
    this.stopped = true
    this.child?.kill()
  }

  private run(job: HashJob): Promise<string | boolean> {
    return new Promise((resolve, reject) => {
      const id = ++this.nextId
      const p: Pending = { job, resolve, reject, sent: 0 }
      this.pending.set(id, p)
      this.send(id, p)
    })
  }

  private send(id: number, p: Pending) {
    if (this.stopped) {
      this.pending.delete(id)
      return p.reject(new Error('password hasher stopped'))
    }
    p.sent++
    p.to = this.child ??= this.spawn()
    p.to.ref()
    try {
      p.to.stdin.write(`${JSON.stringify({ id, ...p.job })}\n`)
      p.to.stdin.flush()
    } catch {
      // The child is gone: lost() sends the job on.
    }
  }

  private spawn() {
    const child = Bun.spawn([process.execPath, join(import.meta.dir, 'password-hasher-process.ts')], {
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'inherit',
      detached: true,
      // It needs none of the API's settings, and its environment is no place for the API's secrets.
      env: { PATH: process.env.PATH ?? '', ...HASHER_ALLOCATOR },
    })
    try {
      setPriority(child.pid, HASHER_NICE)
    } catch {
      // A platform without priorities still hashes, at the same priority as the API.
    }
    child.unref()
    void this.read(child)
    void child.exited.then(() => this.lost(child))
    return child
  }

  private async read(child: Child) {
    const decoder = new TextDecoder()
    let buffered = ''
    const reader = child.stdout.getReader()
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      buffered += decoder.decode(chunk.value, { stream: true })
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const answer = answerOf(buffered.slice(0, nl))
        buffered = buffered.slice(nl + 1)
        if (!answer) continue
        const p = this.pending.get(answer.id)
        if (!p) continue
        this.pending.delete(answer.id)
        if (this.pending.size === 0) child.unref()
        if (answer.ok) p.resolve(answer.result)
        else p.reject(new Error(answer.error))
      }
    }
  }

  /** The child died (killed, out of memory): what it still owed goes to a fresh one, once. */
  private lost(child: Child) {
    if (this.child === child) this.child = undefined
    for (const [id, p] of this.pending) {
      if (p.to !== child) continue
      if (p.sent >= MAX_SENDS || this.stopped) {
        this.pending.delete(id)
        p.reject(
          new Error(
            this.stopped ? 'password hasher stopped' : `password hasher exited (code ${child.exitCode}, signal ${child.signalCode}) twice with this job`,
          ),
        )
      } else {
        this.send(id, p)
      }
    }
  }
}
