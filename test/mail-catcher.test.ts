import { describe, expect, test } from 'bun:test'
import nodemailer from 'nodemailer'
import { waitForMail } from './support/mailbox'

// The same path the API's mail takes: SMTP_URL in, MAIL_CATCHER_URL out.
describe('mail catcher', () => {
  test('a message sent over SMTP can be read back by recipient', async () => {
    const to = `mail-${crypto.randomUUID()}@example.test`
    const bcc = `bcc-${crypto.randomUUID()}@example.test`
    const before = new Date()
    const transport = nodemailer.createTransport(process.env.SMTP_URL!)
    await transport.sendMail({
      from: 'Robot Control Plane <no-reply@rcp.localhost>',
      to,
      bcc,
      subject: 'Welcome <aboard>',
      text: 'Your code is 123456',
      html: '<p>Your code is <b>123456</b></p>',
    })
    transport.close()

    const mail = await waitForMail(to, { subject: /^Welcome/, after: before })
    expect(mail.to).toContain(to)
    expect(mail.from).toContain('no-reply@rcp.localhost')
    expect(mail.subject).toBe('Welcome <aboard>')
    expect(mail.text.trim()).toBe('Your code is 123456')
    expect(mail.html).toContain('<b>123456</b>')
    // Envelope recipients: a Bcc'd address receives the same message.
    expect((await waitForMail(bcc)).id).toBe(mail.id)
  })

  test('the HTML inbox escapes message content', async () => {
    const to = `xss-${crypto.randomUUID()}@example.test`
    const transport = nodemailer.createTransport(process.env.SMTP_URL!)
    await transport.sendMail({ from: 'x@example.test', to, subject: '<script>alert(1)</script>', text: '<img src=x onerror=alert(1)>' })
    transport.close()
    await waitForMail(to)
    const page = await (await fetch(process.env.MAIL_CATCHER_URL!)).text()
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    expect(page).not.toContain('<script>alert(1)')
    expect(page).not.toContain('<img src=x')
  })

  test('waitForMail gives up after its timeout', async () => {
    await expect(waitForMail(`nobody-${crypto.randomUUID()}@example.test`, { timeoutMs: 300 })).rejects.toThrow(/no mail/)
  })
})
