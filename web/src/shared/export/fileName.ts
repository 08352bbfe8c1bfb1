/** The file name of a download, from its Content-Disposition header (RFC 6266, RFC 5987). */

export function fileNameFromDisposition(header: string | null | undefined, fallback: string): string {
  if (!header) return fallback;
  const star = /filename\*\s*=\s*([^']*)'[^']*'([^;]+)/i.exec(header);
  if (star?.[2]) {
    try {
      const name = decodeURIComponent(star[2].trim().replace(/^"|"$/g, ''));
      if (clean(name)) return clean(name);
    } catch {
      // A malformed encoded name falls back to the plain one.
    }
  }
  const quoted = /filename\s*=\s*"((?:[^"\\]|\\.)*)"/i.exec(header);
  if (quoted?.[1] !== undefined && clean(quoted[1].replace(/\\(.)/g, '$1')))
    return clean(quoted[1].replace(/\\(.)/g, '$1'));
  const bare = /filename\s*=\s*([^;"\s]+)/i.exec(header);
  if (bare?.[1] && clean(bare[1])) return clean(bare[1]);
  return fallback;
}

/** No directories and no control characters: only the last path segment is ever used. */
function clean(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  return base.replace(/[\u0000-\u001f\u007f]/g, '').trim();
}
