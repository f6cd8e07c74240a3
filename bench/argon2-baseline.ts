// Bare argon2id: how many password verifications a second this machine's cores do, with the parameters the API
// uses (api/identity/passwords.ts), `concurrency` at a time on Bun's thread pool. Prints one JSON line.
// Usage: bun bench/argon2-baseline.ts <seconds> <concurrency>
import { hashPassword } from '../api/identity/passwords'

const seconds = Number(process.argv[2] ?? 5)
const concurrency = Number(process.argv[3] ?? 32)
const password = 'correct horse battery staple'
const hash = await hashPassword(password)
let done = 0
const deadline = performance.now() + seconds * 1000
const start = performance.now()
await Promise.all(Array.from({ length: concurrency }, async () => {
  while (performance.now() < deadline) {
    if (!(await Bun.password.verify(password, hash))) throw new Error('verify failed')
    done++
  }
}))
console.log(JSON.stringify({ verifies: done, perSecond: done / ((performance.now() - start) / 1000) }))
