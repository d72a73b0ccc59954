// What the dashboard and `cogen plot` read from a run, read-only: the run store's database is opened
// with SQLite's read-only flag (a run may be live in another process; WAL lets readers in), and every
// query is a SELECT. Nothing behind this file writes: runs.ts (the runs and their summaries),
// curves.ts (metrics, charts, heat map), skills.ts (the skill graph), tasks.ts (tasks, proposals).
export { isRunId, listRunIds, runExists, openReadOnly, withRun, runInfo, type RunPhase, type RunInfo } from './runs.js';
export { metricsOf, CURVE_GROUPS, curvesOf, heatOf, type MetricRow, type Curves, type Heat } from './curves.js';
export { skillsOf, type SkillView } from './skills.js';
export {
  searchTasks,
  taskDetail,
  proposalsOf,
  type TaskListRow,
  type TaskQuery,
  type TaskDetail,
  type Proposals,
} from './tasks.js';
