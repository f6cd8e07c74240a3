import { describe, expect, test } from 'bun:test'
import { createServer, type Socket } from 'node:net'
import { SMTP_TIMEOUTS_MS, smtpTransport } from '../../activities/mail'

describe('SMTP attempts', () => {
  // A mail server coming back up can accept connections before it greets. With nodemailer's defaults an attempt
  // waited 30 s for the greeting (and up to 10 minutes of silence later), past this test's 25 s.
  test("one that is accepted and never greeted gives up within the transport's greeting timeout", async () => {
    const sockets: Socket[] = []
    const silent = createServer((s) => {
      sockets.push(s)
    })
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const { port } = silent.address() as { port: number }
    try {
      const transport = smtpTransport(`smtp://127.0.0.1:${port}`, 'platform@example.test')
      await expect(transport.sendMail({ to: 'someone@example.test', subject: 'hello', text: 'hello' })).rejects.toThrow('Greeting never received')
      expect(sockets).toHaveLength(1)
    } finally {
      for (const s of sockets) s.destroy()
      silent.close()
    }
  }, 25_000)

  test("every wait is shorter than the send activity's start-to-close of one minute", () => {
    for (const ms of Object.values(SMTP_TIMEOUTS_MS)) expect(ms).toBeLessThan(60_000)
  })
})
