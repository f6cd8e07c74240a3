// Mail templates: small functions from typed data to subject, text and HTML. Every interpolated value in the
// HTML part is escaped. Add a template here; its data type follows into enqueueMail.
export interface RenderedMail {
  subject: string
  text: string
  html: string
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
const page = (paragraphs: string[]) => paragraphs.map((p) => `<p>${p}</p>`).join('\n')

export const templates = {
  passwordReset: (d: { link: string; code: string; minutes: number }): RenderedMail => ({
    subject: 'Reset your Robot Control Plane password',
    text:
      `Someone asked to reset the password of this account.\n\nOpen ${d.link}\nor enter the code ${d.code}.\n\n` +
      `Both work once and expire in ${d.minutes} minutes. If it was not you, ignore this message.`,
    html: page([
      'Someone asked to reset the password of this account.',
      `<a href="${esc(d.link)}">Choose a new password</a> or enter the code <b>${esc(d.code)}</b>.`,
      `Both work once and expire in ${d.minutes} minutes. If it was not you, ignore this message.`,
    ]),
  }),
  accountActivation: (d: { link: string; tenantName: string; days: number }): RenderedMail => ({
    subject: `You have been added to ${d.tenantName}`,
    text:
      `An administrator created an account for you in ${d.tenantName}.\n\nChoose your password: ${d.link}\n\n` +
      `The link works once and expires in ${d.days} days.`,
    html: page([
      `An administrator created an account for you in <b>${esc(d.tenantName)}</b>.`,
      `<a href="${esc(d.link)}">Choose your password</a>. The link works once and expires in ${d.days} days.`,
    ]),
  }),
  initialPassword: (d: { password: string; tenantName: string }): RenderedMail => ({
    subject: `Your account in ${d.tenantName}`,
    text:
      `An administrator created an account for you in ${d.tenantName}.\n\nYour initial password: ${d.password}\n\n` +
      'You will be asked to choose your own password when you first sign in.',
    html: page([
      `An administrator created an account for you in <b>${esc(d.tenantName)}</b>.`,
      `Your initial password: <code>${esc(d.password)}</code>`,
      'You will be asked to choose your own password when you first sign in.',
    ]),
  }),
  tenantInvitation: (d: { link: string; tenantName: string; role: string; days: number }): RenderedMail => ({
    subject: `You are invited to ${d.tenantName}`,
    text: `You are invited to join ${d.tenantName} as ${d.role}.\n\nAccept: ${d.link}\n\nThe link works once and expires in ${d.days} days.`,
    html: page([
      `You are invited to join <b>${esc(d.tenantName)}</b> as ${esc(d.role)}.`,
      `<a href="${esc(d.link)}">Accept the invitation</a>. The link works once and expires in ${d.days} days.`,
    ]),
  }),
  tenantExportReady: (d: { tenantName: string; rows: string; objects: string; manifest: string; days: number }): RenderedMail => ({
    subject: `The export of ${d.tenantName} is ready`,
    text:
      `${d.tenantName} is being offboarded. Its export is ready:\n\nRows: ${d.rows}\nObject manifest: ${d.objects}\nSigned manifest: ${d.manifest}\n\n` +
      `The links work for ${d.days} days; fresh ones are on the offboarding page (GET /v1/tenants/current/offboarding) until the retention window ends.`,
    html: page([
      `<b>${esc(d.tenantName)}</b> is being offboarded. Its export is ready:`,
      `<a href="${esc(d.rows)}">Rows</a> · <a href="${esc(d.objects)}">Object manifest</a> · <a href="${esc(d.manifest)}">Signed manifest</a>`,
      `The links work for ${d.days} days; fresh ones are on the offboarding page until the retention window ends.`,
    ]),
  }),
  registrationInvitation: (d: { link: string; days: number }): RenderedMail => ({
    subject: 'Create your Robot Control Plane account',
    text: `Finish creating your account: ${d.link}\n\nThe link works once and expires in ${d.days} days. If you did not ask for it, ignore this message.`,
    html: page([
      `<a href="${esc(d.link)}">Finish creating your account</a>.`,
      `The link works once and expires in ${d.days} days. If you did not ask for it, ignore this message.`,
    ]),
  }),
} as const

export type MailTemplate = keyof typeof templates
export type MailData<T extends MailTemplate> = Parameters<(typeof templates)[T]>[0]

export const isMailTemplate = (name: string): name is MailTemplate => Object.hasOwn(templates, name)

export function renderMail(template: string, data: unknown): RenderedMail {
  if (!isMailTemplate(template)) throw new Error(`unknown mail template ${template}`)
  return (templates[template] as (d: unknown) => RenderedMail)(data)
}
