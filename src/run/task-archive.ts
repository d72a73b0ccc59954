// The archive of a run's tasks by id, with each arm's tasks kept in a list of their own. An
// exhausted arm replays one of its archived tasks for each of its picks (src/run/parts.ts), and
// scanning the whole archive for them took about a quarter of a 128-task step's main thread.
import { armKey, type Arm } from '../../curricula/index.js';
import type { Task } from '../../core/task.js';

/** A Map of tasks by id that also lists each arm's tasks, in the Map's own (insertion) order. */
export class TaskArchive extends Map<string, Task> {
  private readonly arms = new Map<string, Task[]>();

  constructor() {
    super(); // no entries here: Map's constructor would call set before `arms` exists
  }

  override set(id: string, task: Task): this {
    const old = super.get(id);
    super.set(id, task);
    const key = armKey(task);
    const list = this.arms.get(key) ?? [];
    this.arms.set(key, list);
    // The Map keeps a replaced entry's place, and so does its arm's list (an id names one task, so
    // its arm does not change; if it did, the task would go to the end of its new arm's list).
    if (old && armKey(old) === key) list[list.indexOf(old)] = task;
    else {
      if (old) this.unlist(old);
      list.push(task);
    }
    return this;
  }

  override delete(id: string): boolean {
    const old = super.get(id);
    if (!old) return false;
    this.unlist(old);
    return super.delete(id);
  }

  override clear(): void {
    this.arms.clear();
    super.clear();
  }

  private unlist(old: Task): void {
    const list = this.arms.get(armKey(old))!;
    const i = list.indexOf(old);
    if (i >= 0) list.splice(i, 1);
  }

  /** The arm's archived tasks, oldest first (the order a scan of the Map gives). */
  ofArm(arm: Arm): readonly Task[] {
    return this.arms.get(armKey(arm)) ?? [];
  }
}
