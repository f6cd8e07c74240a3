// The offboarding retention window's setting (api/platform/config.ts): 30 days unless set, and never under a day.
import { describe, expect, test } from 'bun:test'
import { loadConfig } from '../../api/platform/config'

const REQUIRED = { DATABASE_URL: 'postgres://u@127.0.0.1:9/none', SECRET_KEY: Buffer.alloc(32, 7).toString('base64') }

describe('OFFBOARDING_RETENTION_DAYS', () => {
  test('defaults to 30 days and takes whole days from 1', () => {
    expect(loadConfig(REQUIRED).OFFBOARDING_RETENTION_DAYS).toBe(30)
    expect(loadConfig({ ...REQUIRED, OFFBOARDING_RETENTION_DAYS: '1' }).OFFBOARDING_RETENTION_DAYS).toBe(1)
    expect(loadConfig({ ...REQUIRED, OFFBOARDING_RETENTION_DAYS: '90' }).OFFBOARDING_RETENTION_DAYS).toBe(90)
  })

  test('a window under a day (or not a whole number of days) is refused at start-up', () => {
    for (const days of ['0', '-1', '0.5', 'soon']) {
      expect(() => loadConfig({ ...REQUIRED, OFFBOARDING_RETENTION_DAYS: days })).toThrow('OFFBOARDING_RETENTION_DAYS')
    }
  })
})
