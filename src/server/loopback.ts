// The token rule's test, shared by `cogen serve` and `cogen worker`: any address but loopback needs a bearer token.
import { isIP } from 'node:net';

export const isLoopback = (host: string): boolean =>
  host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
