// Types for what TypeScript files read from readout.mjs (plain JavaScript, loaded as-is in workers).
/** Most characters of a failure's detail. */
export const DETAIL_MAX: number;
/** Most characters of an error's name or message, or of a thrown string, copied out of a context. */
export const TEXT_MAX: number;
