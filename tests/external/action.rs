//! The composite GitHub Action of the repository root (`action.yml`): its `run:` steps, run with
//! bash as GitHub runs a `shell: bash` step (`bash --noprofile --norc -eo pipefail`), with the
//! built `logspec` first on PATH, in a scratch repository whose project (`logspec init`, in the
//! subdirectory `demo/`) has a hand-edited generated file and a breaking change without a schema
//! id bump. The annotations it prints are compared with the ones written out here from
//! docs/output.md; the steps after `logspec check` fails do not run, and it fails the step.
//!
//! There is no YAML parser among the dependencies, so [`parse`] reads this one file's known shape
//! (and fails on anything else, so that the file and this reader change together):
//! - `inputs:` at the top level, each input a two-space-indented `name:` with a four-space
//!   `default: VALUE` (a value in double quotes is unquoted);
//! - `runs:` with `  steps:`, each step starting with `    - name: NAME`, then six-space keys:
//!   `shell: bash` (required), `env:` with eight-space `KEY: VALUE` lines, and `run: |` followed
//!   by its block, indented by eight spaces (blank lines kept).
//!
//! `${{ inputs.NAME }}` in an env value is replaced by the input's value; any other `${{` fails.

use crate::scratch;

use std::path::Path;
use std::process::Command;

use crate::tools::{trial, Need};

pub fn trials() -> Vec<libtest_mimic::Trial> {
    vec![
        trial("action_yml_reader", &[], parses_this_shape),
        trial("action_run_steps_print_the_annotations", &[Need::Program("bash")], run_steps),
    ]
}

#[derive(Debug)]
struct Step {
    name: String,
    env: Vec<(String, Value)>,
    run: String,
}

/// An env value of a step.
#[derive(Debug, PartialEq)]
enum Value {
    /// `${{ inputs.NAME }}`.
    Input(String),
    Literal(String),
}

/// The inputs with their defaults, and the steps, of action.yml (see the module's doc).
fn parse(text: &str) -> (Vec<(String, String)>, Vec<Step>) {
    let unquote = |v: &str| {
        let v = v.trim();
        v.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(v).to_string()
    };
    let mut inputs: Vec<(String, String)> = Vec::new();
    let mut steps: Vec<Step> = Vec::new();
    let mut section = "";
    let mut in_env = false;
    let mut in_run = false;
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        if in_run {
            if line.trim().is_empty() {
                steps.last_mut().unwrap().run.push('\n');
                continue;
            }
            if indent >= 8 {
                let step = steps.last_mut().unwrap();
                step.run.push_str(&line[8..]);
                step.run.push('\n');
                continue;
            }
            in_run = false;
        }
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if indent == 0 {
            section = line.split(':').next().unwrap();
            continue;
        }
        match section {
            "inputs" if indent == 2 => {
                let name = line.trim().strip_suffix(':').unwrap_or_else(|| panic!("an input name: {line:?}"));
                inputs.push((name.to_string(), String::new()));
            }
            "inputs" if indent == 4 => {
                if let Some(v) = line.trim().strip_prefix("default:") {
                    inputs.last_mut().expect("an input before its default").1 = unquote(v);
                }
            }
            "runs" if indent == 2 => {
                assert!(matches!(line.trim(), "using: composite" | "steps:"), "unexpected line {line:?}");
            }
            "runs" if indent == 4 => {
                let name = line.trim().strip_prefix("- name:").unwrap_or_else(|| panic!("a step: {line:?}"));
                steps.push(Step { name: unquote(name), env: Vec::new(), run: String::new() });
                in_env = false;
            }
            "runs" if indent == 6 => {
                in_env = false;
                let step = steps.last_mut().expect("a step");
                match line.trim() {
                    "shell: bash" => {}
                    "env:" => in_env = true,
                    "run: |" => in_run = true,
                    other => panic!("step {:?}: this reader does not know {other:?}", step.name),
                }
            }
            "runs" if indent == 8 && in_env => {
                let (k, v) = line.trim().split_once(':').unwrap_or_else(|| panic!("an env line: {line:?}"));
                let v = v.trim();
                let value = match v.strip_prefix("${{ inputs.").and_then(|v| v.strip_suffix(" }}")) {
                    Some(input) => {
                        assert!(
                            inputs.iter().any(|(n, _)| n == input),
                            "step {:?} uses the undeclared input {input}",
                            steps.last().unwrap().name
                        );
                        Value::Input(input.to_string())
                    }
                    None => {
                        assert!(!v.contains("${{"), "only `${{{{ inputs.NAME }}}}` expressions: {v:?}");
                        Value::Literal(unquote(v))
                    }
                };
                steps.last_mut().unwrap().env.push((k.to_string(), value));
            }
            "name" | "description" => {}
            _ => panic!("this reader does not know the line {line:?}"),
        }
    }
    (inputs, steps)
}

fn logspec_in(dir: &Path, args: &[&str]) {
    let o = Command::new(env!("CARGO_BIN_EXE_logspec"))
        .current_dir(dir)
        .args(args)
        .env_remove("GITHUB_WORKSPACE")
        .output()
        .expect("run logspec");
    assert!(o.status.success(), "logspec {args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} has no {from:?}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

fn run_steps() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/action.yml")).unwrap();
    let (inputs, steps) = parse(&text);
    let names: Vec<&str> = inputs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["args", "working-directory"]);
    assert_eq!(steps.len(), 2, "{steps:?}");

    // The repository: the project in demo/, generated, then broken twice.
    let repo = scratch::temp_dir().join("action-repo");
    let _ = std::fs::remove_dir_all(&repo);
    let dir = repo.join("demo");
    std::fs::create_dir_all(&dir).unwrap();
    logspec_in(&dir, &["init", "--format", "demo"]);
    logspec_in(&dir, &["gen"]);
    edit(&dir.join("schemas/demo.toml"), "name = \"REC_HEARTBEAT\"\nid = 1", "name = \"REC_HEARTBEAT\"\nid = 7");
    logspec_in(&dir, &["gen"]);
    let py = dir.join("python/demo.py");
    edit(&py, "REC_HEARTBEAT = 7", "REC_HEARTBEAT = 70");
    let line = std::fs::read_to_string(&py).unwrap().lines().position(|l| l == "REC_HEARTBEAT = 70").unwrap() + 1;

    // The workflow's `with:`: the project's directory, and an argument passed through.
    let with = [("working-directory", "demo"), ("args", "--schemas schemas")];
    let bin = Path::new(env!("CARGO_BIN_EXE_logspec")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let mut printed = String::new();
    let mut failed = None;
    for step in &steps {
        let mut c = Command::new("bash");
        c.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &step.run])
            .current_dir(&repo)
            .env("PATH", &path)
            .env("GITHUB_WORKSPACE", &repo);
        for (k, v) in &step.env {
            // An input's value is the workflow's (`with:`), else its default.
            let value = match v {
                Value::Literal(l) => l.clone(),
                Value::Input(name) => with
                    .iter()
                    .find(|(n, _)| n == name)
                    .map_or_else(|| inputs.iter().find(|(n, _)| n == name).unwrap().1.clone(), |(_, v)| v.to_string()),
            };
            c.env(k, value);
        }
        let o = c.output().expect("bash");
        printed.push_str(&String::from_utf8_lossy(&o.stdout));
        if !o.status.success() {
            failed = Some((step.name.clone(), o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned()));
            break;
        }
    }
    let (name, code, stderr) = failed.expect("the check step fails");
    assert_eq!((name.as_str(), code), ("logspec check", Some(1)), "{stderr}");
    assert_eq!(
        printed,
        format!(
            "::error file=demo/python/demo.py,line={line},title=stale generated file::this file differs from what the schemas generate; run `logspec gen` to regenerate it (generated files must not be edited by hand)\n\
             ::error file=demo/schemas/demo.toml,line=39,title=breaking change without a schema id bump::record REC_HEARTBEAT was renumbered from id 1 to id 7; breaking under unchanged DEMO_SCHEMA = 1: bump DEMO_SCHEMA in the schema, then run `logspec lock`\n"
        ),
        "stderr:\n{stderr}"
    );
}

/// The reader itself, on a small file of the same shape.
fn parses_this_shape() {
    let (inputs, steps) = parse(
        "name: x\ninputs:\n  a:\n    description: d\n    default: \"1 2\"\nruns:\n  using: composite\n  steps:\n    - name: s\n      shell: bash\n      env:\n        A: ${{ inputs.a }}\n      run: |\n        echo \"$A\"\n\n        true\n",
    );
    assert_eq!(inputs, [("a".to_string(), "1 2".to_string())]);
    assert_eq!(steps[0].env, [("A".to_string(), Value::Input("a".to_string()))]);
    assert_eq!(steps[0].run, "echo \"$A\"\n\ntrue\n");
}
