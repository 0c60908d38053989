/** Code-unit order of strings, not locale order, so every server sorts ids and codes the same way. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
