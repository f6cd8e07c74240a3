// Files run in parallel; those that need one run-wide resource take turns on it (test/support/exclusive.ts). The lock
// is held until released, and a holder that dies (its connection gone) frees it.
import { describe, expect, test } from 'bun:test'
import { acquire, LOCK_WAIT_MS } from '../support/exclusive'

const settledWithin = (p: Promise<unknown>, ms: number) => Promise.race([p.then(() => true), Bun.sleep(ms).then(() => false)])

describe('exclusive resources', () => {
  test('a second holder waits until the first releases', async () => {
    const releaseFirst = await acquire('webhook-dispatcher')
    const second = acquire('webhook-dispatcher')
    expect(await settledWithin(second, 1000)).toBe(false)
    await releaseFirst()
    expect(await settledWithin(second, 10_000)).toBe(true)
    await (await second)()
  }, LOCK_WAIT_MS) // the first acquire waits for any file of the run holding it
})
