/** URL slugs: lowercase ASCII words joined by single dashes ("Café Crème 2" -> "cafe-creme-2"). */
export const SLUG_MAX_LENGTH = 200

export function slugify(text: string, fallback = 'item'): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, SLUG_MAX_LENGTH)
    .replace(/^-+|-+$/g, '')
  return slug || fallback
}
