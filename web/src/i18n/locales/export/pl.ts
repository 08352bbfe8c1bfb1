/** Polish messages of the export screens, merged into ../pl.ts. */
import type { exportEn } from './en.ts';

export const exportPl: Record<keyof typeof exportEn, string> = {};
