/**
 * Every relative link in the repository's Markdown (README.md, <package>/README.md, docs/*.md,
 * bench/results/*.md) points at a file that exists inside the repository, and every `#anchor` into a Markdown file names one of its
 * headings (GitHub's slug rules). Nothing may point outside the repository (such as the old shared folder
 * beside it): a clone has only what is in it.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The folder beside the repository that documents once lived in; spelled in parts so no file names it. */
const SHARED = ['..', 'shared', ''].join('/');

/** README.md, every top-level folder's README.md, docs/*.md and bench/results/*.md, relative to the root. */
function markdownFiles(root: string): string[] {
  const files = ['README.md'];
  for (const entry of readdirSync(root)) {
    if (entry.startsWith('.') || entry === 'node_modules') continue;
    if (!statSync(path.join(root, entry)).isDirectory()) continue;
    if (existsSync(path.join(root, entry, 'README.md'))) files.push(`${entry}/README.md`);
  }
  for (const folder of ['docs', 'bench/results']) {
    const dir = path.join(root, folder);
    if (!existsSync(dir)) continue;
    for (const entry of readdirSync(dir)) {
      if (entry.endsWith('.md') && entry !== 'README.md') files.push(`${folder}/${entry}`);
    }
  }
  return files.filter((f) => existsSync(path.join(root, f)));
}

/** Lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(text: string): { line: string; n: number }[] {
  const out: { line: string; n: number }[] = [];
  let fence: string | null = null;
  text.split('\n').forEach((line, i) => {
    const m = /^\s*(`{3,}|~{3,})/.exec(line);
    if (m) {
      if (fence === null) fence = m[1]![0]!;
      else if (m[1]![0] === fence) fence = null;
      return;
    }
    if (fence === null) out.push({ line, n: i + 1 });
  });
  return out;
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a Markdown text defines: one per heading (duplicates get -1, -2, …) and explicit ids. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const add = (base: string) => {
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count === 0 ? base : `${base}-${count}`);
  };
  const lines = proseLines(text);
  lines.forEach(({ line }, i) => {
    const atx = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (atx) add(slug(atx[1]!));
    else if (i > 0 && /^ {0,3}(=+|-+)\s*$/.test(line)) {
      const prev = lines[i - 1]!;
      if (prev.n === lines[i]!.n - 1 && /^\s*[^\s|#>*+-]/.test(prev.line)) add(slug(prev.line));
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1]!);
  });
  return out;
}

/** Link targets in a Markdown text (inline links, images and reference definitions), code left out. */
export function links(text: string): { target: string; n: number }[] {
  const out: { target: string; n: number }[] = [];
  for (const { line, n } of proseLines(text)) {
    const prose = line.replace(/(`+)(.+?)\1/g, 'code');
    for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) {
      out.push({ target: m[1]!, n });
    }
    const ref = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(prose);
    if (ref) out.push({ target: ref[1]!, n });
  }
  return out;
}

/** What is wrong with the links of one Markdown file (paths relative to `root`). */
export function brokenLinks(root: string, file: string): string[] {
  const problems: string[] = [];
  const text = readFileSync(path.join(root, file), 'utf8');
  for (const { target, n } of links(text)) {
    const where = `${file}:${n}: ${target}`;
    if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [rawPath = '', anchor] = target.split('#', 2) as [string, string | undefined];
    const linkPath = decodeURIComponent(rawPath.split('?')[0]!);
    const resolved = linkPath
      ? linkPath.startsWith('/')
        ? path.join(root, linkPath)
        : path.resolve(root, path.dirname(file), linkPath)
      : path.join(root, file);
    const relative = path.relative(root, resolved);
    if (relative.startsWith('..') || path.isAbsolute(relative)) {
      problems.push(`${where} points outside the repository`);
      continue;
    }
    if (!existsSync(resolved)) {
      problems.push(`${where} names a file that does not exist`);
      continue;
    }
    if (anchor !== undefined && resolved.endsWith('.md') && statSync(resolved).isFile()) {
      if (!anchors(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor).toLowerCase())) {
        problems.push(`${where} names no heading of ${relative}`);
      }
    }
  }
  if (text.includes(SHARED)) problems.push(`${file} refers to ${SHARED}, which is not in the repository`);
  return problems;
}

describe('links in the repository Markdown', () => {
  const files = markdownFiles(ROOT);

  it('covers the READMEs and the docs folder', () => {
    expect(files).toContain('README.md');
    expect(files).toContain('docs/README.md');
    expect(files).toContain('docs/api.md');
  });

  it.each(files)('%s: every relative link and anchor resolves inside the repository', (file) => {
    expect(brokenLinks(ROOT, file)).toEqual([]);
  });
});

describe('the link check itself', () => {
  it('slugs headings as GitHub does', () => {
    expect(slug('Configuration (environment)')).toBe('configuration-environment');
    expect(slug('5. Validation rules')).toBe('5-validation-rules');
    expect(slug('The `TelemetryStore` port')).toBe('the-telemetrystore-port');
    expect(slug('Limits, notifications, voltage quality')).toBe('limits-notifications-voltage-quality');
    expect(slug('A — B')).toBe('a--b');
    expect([...anchors('# Same\n\n## Same\n\n```\n# not a heading\n```\n')]).toEqual(['same', 'same-1']);
  });

  it('finds links outside code and reports missing files, unknown anchors and the shared folder', () => {
    const text = '[a](x.md) `[b](y.md)` ![c](<img.png> "t")\n```\n[d](z.md)\n```\n[e]: ref.md\n';
    expect(links(text).map((l) => l.target)).toEqual(['x.md', 'img.png', 'ref.md']);

    const root = mkdtempSync(path.join(os.tmpdir(), 'kw-links-'));
    try {
      mkdirSync(path.join(root, 'docs'));
      writeFileSync(path.join(root, 'README.md'), '# Top\n\n## Packages\n');
      writeFileSync(
        path.join(root, 'docs/broken.md'),
        `# Broken\n\n[gone](missing.md)\n[anchor](../README.md#no-such-heading)\n[outside](../${SHARED}API.md)\n[here](#nowhere)\n`,
      );
      writeFileSync(
        path.join(root, 'docs/fine.md'),
        '# Fine links\n\n[readme](../README.md#packages) [self](#fine-links) [site](https://example.com)\n',
      );
      expect(brokenLinks(root, 'docs/broken.md')).toEqual([
        'docs/broken.md:3: missing.md names a file that does not exist',
        'docs/broken.md:4: ../README.md#no-such-heading names no heading of README.md',
        `docs/broken.md:5: ../${SHARED}API.md points outside the repository`,
        'docs/broken.md:6: #nowhere names no heading of docs/broken.md',
        `docs/broken.md refers to ${SHARED}, which is not in the repository`,
      ]);
      expect(brokenLinks(root, 'docs/fine.md')).toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
