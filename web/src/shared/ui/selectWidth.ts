/**
 * A width for a select that shows its longest option whole, in the language it is written in: a
 * character width per character (`ch`, with one to spare for wide letters) and room for the padding
 * and the chevron. A select sized by hand ("110 px") cuts "Automatyczny" to "Automatycz".
 */
export function selectWidth(labels: readonly string[], minCh = 6): string {
  const longest = labels.reduce((n, l) => Math.max(n, [...l].length), minCh);
  return `calc(${longest + 1}ch + 2.75rem)`;
}
