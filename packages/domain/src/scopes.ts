/**
 * Scopes are `<resource>:<action>` (read, write); `write` implies `read` of the same resource,
 * a bare `read` grants every `:read`, and `*` grants everything.
 */
export function hasScope(granted: readonly string[], required: string): boolean {
  const [resource, action] = required.split(':')
  return granted.some(
    (scope) =>
      scope === '*' ||
      scope === required ||
      (action === 'read' && (scope === 'read' || scope === `${resource}:write`)),
  )
}
