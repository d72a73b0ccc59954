// What the dashboard and `cogen plot` read from a run, read-only (the database opened with SQLite's
// read-only flag, every query a SELECT): runs.ts (runs, summaries), curves.ts (metrics, charts, heat
// map), skills.ts (the skill graph), tasks.ts (tasks, proposals). Nothing behind this file writes.
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
