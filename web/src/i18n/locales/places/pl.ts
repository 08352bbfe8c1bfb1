/** Polish messages of the places screens, merged into ../pl.ts. */
import type { placesEn } from './en.ts';

export const placesPl: Record<keyof typeof placesEn, string> = {};
