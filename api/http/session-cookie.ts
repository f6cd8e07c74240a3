import type { Config } from '../platform/config'
import { SESSION_COOKIE } from './auth'

export const secure = (config: Config) =>
  config.COOKIE_SECURE === 'true' || (config.COOKIE_SECURE === 'auto' && !(config.PUBLIC_URL ?? 'http://localhost').startsWith('http://'))

export function sessionCookie(config: Config, token: string, expiresAt: Date): string {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000))
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure(config) ? '; Secure' : ''}`
}

export const clearedSessionCookie = (config: Config): string =>
  `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure(config) ? '; Secure' : ''}`
