// The child side of password-hasher.ts: a job per line of stdin, an answer per line of stdout, in the order the
// hashes finish (Bun's thread pool runs them in parallel). It logs nothing: a job holds a password.
import type { HashAnswer, HashJob } from './password-hasher'

const out = Bun.stdout.writer()
const answer = (a: HashAnswer) => {
  out.write(`${JSON.stringify(a)}\n`)
  out.flush()
}

for await (const line of console) {
  if (!line) continue
  const job = JSON.parse(line) as HashJob & { id: number }
  const work =
    job.op === 'hash'
      ? Bun.password.hash(job.password, { algorithm: 'argon2id', memoryCost: job.memoryCost, timeCost: job.timeCost })
      : Bun.password.verify(job.password, job.hash)
  work.then(
    (result) => answer({ id: job.id, ok: true, result }),
    (err: unknown) => answer({ id: job.id, ok: false, error: err instanceof Error ? err.message : 'hashing failed' }),
  )
}
// stdin closed: the API is gone.
process.exit(0)
