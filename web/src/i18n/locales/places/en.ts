/** English messages of the places screens, merged into the English catalogue (../en.ts). */
export const placesEn = {} as const;
