/** The `code` of what `fn` throws (an ApiError's catalogue code), or null when it returns. */
export const thrownCode = (fn: () => unknown): string | null | undefined => {
  try {
    fn()
    return null
  } catch (err) {
    return (err as { code?: string }).code
  }
}
