/** Turkish messages of the export screens, merged into ../tr.ts. */
import type { exportEn } from './en.ts';

export const exportTr: Record<keyof typeof exportEn, string> = {};
