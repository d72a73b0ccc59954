// Cutting a long text for a one-line message (an error, a rejection's detail): the first `n`
// characters and "…". envs/kinds/common.ts cuts an environment's observations by a rule of its own
// (it also says how many characters were left out).

/** `s` when it has at most `n` characters; otherwise its first `n` and "…". */
export const clip = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n)}…` : s);
