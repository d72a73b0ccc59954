// Network namespaces for the chaos bench's partitions (docs/scale-out.md, "Faults of the services"):
// a process runs in a namespace of its own, joined to this machine by veth links, each a private
// /24 (10.77.<k>.1 on this side, .2 inside). A partition drops every packet of one link both ways,
// silently, as a pulled cable or a firewall would (no reset: each side learns of it only from its
// own timeouts); healing lets them through again. The drop is a pfifo queue of length 0 on both
// ends of the link (tc from iproute2), which needs no kernel module beyond the defaults. Needs root.
import { execFileSync } from 'node:child_process';

export interface Link {
  /** The address of this machine's end, and of the namespace's end. */
  outside: string;
  inside: string;
  cut(): void;
  heal(): void;
}

export interface Namespace {
  name: string;
  links: Link[];
  /** The command line that runs a program inside the namespace (`ip netns exec` execs it: same pid). */
  wrap: string[];
  remove(): void;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
let made = 0;
/** The third byte of the next link's subnet: spread by pid, so that two benches at once do not meet. */
let subnet = (process.pid % 24) * 10;
const nextSubnet = () => 10 + (subnet++ % 240);

/** Whether this machine can make namespaces (root, iproute2); the reason when it cannot. */
export function namespacesUnavailable(): string | null {
  try {
    const probe = `cogen-probe-${process.pid}`;
    ip('netns', 'add', probe);
    ip('netns', 'del', probe);
    execFileSync('tc', ['-V'], { stdio: 'ignore' });
    return null;
  } catch (e) {
    return `no network namespaces here (root and iproute2's ip and tc are needed): ${(e as Error).message.split('\n')[0]}`;
  }
}

/** A namespace with `links` links; the first carries its default route. */
export function makeNamespace(links: number): Namespace {
  const name = `cogen-bench-${process.pid}-${made++}`;
  ip('netns', 'add', name);
  const inNs = (...args: string[]) => ip('netns', 'exec', name, 'ip', ...args);
  const tc = (inside: boolean, ...args: string[]) =>
    execFileSync(inside ? 'ip' : 'tc', inside ? ['netns', 'exec', name, 'tc', ...args] : args, { stdio: 'ignore' });
  inNs('link', 'set', 'lo', 'up');
  const out: Link[] = [];
  for (let i = 0; i < links; i++) {
    const k = nextSubnet();
    const [host, peer] = [`cgb${k}h`, `cgb${k}n`];
    try {
      ip('link', 'del', host);
    } catch {
      // none left from an earlier run
    }
    ip('link', 'add', host, 'type', 'veth', 'peer', 'name', peer);
    ip('link', 'set', peer, 'netns', name);
    ip('addr', 'add', `10.77.${k}.1/24`, 'dev', host);
    ip('link', 'set', host, 'up');
    inNs('addr', 'add', `10.77.${k}.2/24`, 'dev', peer);
    inNs('link', 'set', peer, 'up');
    if (i === 0) inNs('route', 'add', 'default', 'via', `10.77.${k}.1`);
    out.push({
      outside: `10.77.${k}.1`,
      inside: `10.77.${k}.2`,
      cut() {
        tc(false, 'qdisc', 'replace', 'dev', host, 'root', 'pfifo', 'limit', '0');
        tc(true, 'qdisc', 'replace', 'dev', peer, 'root', 'pfifo', 'limit', '0');
      },
      heal() {
        tc(false, 'qdisc', 'del', 'dev', host, 'root');
        tc(true, 'qdisc', 'del', 'dev', peer, 'root');
      },
    });
  }
  return {
    name,
    links: out,
    wrap: ['ip', 'netns', 'exec', name],
    remove() {
      // Deleting the namespace deletes its ends of the links, and with them this machine's ends.
      try {
        ip('netns', 'del', name);
      } catch {
        // gone already
      }
    },
  };
}
