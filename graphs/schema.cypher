// cogen skill graph schema (docs/DESIGN.md, "Skills and the skill graph"). Applied statement by
// statement at Neo4jSkillGraph.init(); every statement is idempotent (IF NOT EXISTS). Neo4j 5.x,
// Community or later.
//
// (:Skill {id, family, name, description, level})-[:REQUIRES]->(:Skill)
// (:Run {id, preset, config, startedAt, endedAt, status})
// (:Task {id, type, family, level, program, hash, prompt, solveRate})-[:EXERCISES]->(:Skill)
// (:Task)-[:DERIVED_FROM {op}]->(:Task)
// (:Run)-[:PROPOSED {step}]->(:Task)
// (:Run)-[:MASTERED {sinceStep, sinceAt, untilStep, untilAt, accuracy, untilAccuracy, baseline, untilBaseline}]->(:Skill)
// (:Run)-[:SAVED]->(:Checkpoint {id, runId, step, path})

CREATE CONSTRAINT cogen_skill_id IF NOT EXISTS FOR (s:Skill) REQUIRE s.id IS UNIQUE;
CREATE CONSTRAINT cogen_task_id IF NOT EXISTS FOR (t:Task) REQUIRE t.id IS UNIQUE;
CREATE CONSTRAINT cogen_run_id IF NOT EXISTS FOR (r:Run) REQUIRE r.id IS UNIQUE;
CREATE CONSTRAINT cogen_checkpoint_id IF NOT EXISTS FOR (c:Checkpoint) REQUIRE c.id IS UNIQUE;

CREATE INDEX cogen_skill_family IF NOT EXISTS FOR (s:Skill) ON (s.family);
CREATE INDEX cogen_task_family_level IF NOT EXISTS FOR (t:Task) ON (t.family, t.level);
CREATE INDEX cogen_task_hash IF NOT EXISTS FOR (t:Task) ON (t.hash);
CREATE INDEX cogen_mastered_since IF NOT EXISTS FOR ()-[m:MASTERED]-() ON (m.sinceStep);
CREATE INDEX cogen_proposed_step IF NOT EXISTS FOR ()-[p:PROPOSED]-() ON (p.step);
