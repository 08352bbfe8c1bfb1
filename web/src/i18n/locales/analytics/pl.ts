/** Polish messages of the analytics screens, merged into ../pl.ts. */
import type { analyticsEn } from './en.ts';

export const analyticsPl: Record<keyof typeof analyticsEn, string> = {};
