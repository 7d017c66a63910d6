//! `--message-format` of the project verbs (`check`, `gen`, `lock`, `diff`): the text for people
//! (the default), GitHub Actions workflow-command annotations, or JSON Lines, one per diagnostic
//! (docs/output.md, "Diagnostics of the project verbs").
//!
//! With `github` or `json`, standard output carries the annotations or JSON lines only; the text
//! a person reads (diffs, verdicts, `wrote` lines) goes to standard error.

use std::path::{Path, PathBuf};

use logspec::ir::diag::SchemaError;
use logspec::ir::lock::{self, Change};

use super::project::Project;
use super::Error;

/// How the project verbs print their diagnostics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum MessageFormat {
    /// Text for people: unified diffs and `logspec: …` lines.
    #[default]
    Human,
    /// GitHub Actions workflow commands on standard output, one per diagnostic
    /// (`::error file=F,line=L,col=C,title=T::MESSAGE`), which GitHub shows on the files.
    Github,
    /// JSON Lines on standard output, one object per diagnostic (keys: docs/output.md).
    Json,
}

/// How much a diagnostic matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
        }
    }
}

/// One diagnostic: a file, where in it when known (1-based lines and columns; the end is the last
/// character, inclusive), a short title and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diag {
    pub level: Level,
    /// The schema compiler's stable code (`E0101`), for schema errors.
    pub code: Option<&'static str>,
    pub file: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub end_line: Option<usize>,
    pub end_column: Option<usize>,
    pub title: String,
    pub message: String,
}

/// The titles of the diagnostics that are not schema errors.
pub const STALE: &str = "stale generated file";
pub const BREAKING: &str = "breaking change without a schema id bump";
pub const LOCK_STALE: &str = "lock file out of date";
pub const LOCK_MISSING: &str = "missing lock file";
pub const LOCK_HISTORY: &str = "lock history cannot be rebuilt";

impl Diag {
    /// A diagnostic on a whole file (no line).
    pub fn file(level: Level, file: String, title: &str, message: String) -> Diag {
        Diag {
            level,
            code: None,
            file,
            line: None,
            column: None,
            end_line: None,
            end_column: None,
            title: title.to_string(),
            message,
        }
    }

    /// The GitHub Actions workflow command: `::error file=F,line=L,col=C,endLine=…,endColumn=…,title=T::MESSAGE`,
    /// the properties that are unknown left out; the message escaped as GitHub's toolkit does
    /// (`%`, CR, LF) and the property values also their `:` and `,`.
    pub fn github(&self) -> String {
        let mut props = vec![format!("file={}", escape_property(&self.file))];
        for (key, value) in
            [("line", self.line), ("col", self.column), ("endLine", self.end_line), ("endColumn", self.end_column)]
        {
            if let Some(v) = value {
                props.push(format!("{key}={v}"));
            }
        }
        props.push(format!("title={}", escape_property(&self.title)));
        format!("::{} {}::{}", self.level.as_str(), props.join(","), escape_data(&self.message))
    }

    /// One JSON object with every key, `null` for what is unknown.
    pub fn json(&self) -> String {
        use logspec::ir::json::string;
        let mut out = String::from("{\"level\":");
        string(&mut out, self.level.as_str());
        out.push_str(",\"code\":");
        match self.code {
            Some(c) => string(&mut out, c),
            None => out.push_str("null"),
        }
        out.push_str(",\"file\":");
        string(&mut out, &self.file);
        for (key, value) in
            [("line", self.line), ("column", self.column), ("end_line", self.end_line), ("end_column", self.end_column)]
        {
            out.push_str(&format!(",\"{key}\":"));
            match value {
                Some(v) => out.push_str(&v.to_string()),
                None => out.push_str("null"),
            }
        }
        out.push_str(",\"title\":");
        string(&mut out, &self.title);
        out.push_str(",\"message\":");
        string(&mut out, &self.message);
        out.push('}');
        out
    }
}

/// A workflow command's message: `%`, CR and LF as `%25`, `%0D`, `%0A`.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A workflow command's property value: as a message, and `:` and `,` as `%3A`, `%2C`.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// Prints a verb's diagnostics in the chosen format.
pub struct Reporter {
    format: MessageFormat,
    /// What file paths are relative to: `$GITHUB_WORKSPACE` for `github` when it is set (GitHub
    /// places annotations by paths relative to the repository), else the current directory.
    base: Option<PathBuf>,
}

impl Reporter {
    pub fn new(format: MessageFormat) -> Reporter {
        let workspace =
            std::env::var_os("GITHUB_WORKSPACE").filter(|w| !w.is_empty() && format == MessageFormat::Github);
        let base = workspace.map(PathBuf::from).or_else(|| std::env::current_dir().ok());
        Reporter { format, base: base.and_then(|b| b.canonicalize().ok()) }
    }

    /// Whether the output is the text for people.
    pub fn human(&self) -> bool {
        self.format == MessageFormat::Human
    }

    /// Text a person reads: standard output in the human format, standard error in the others
    /// (whose standard output is the diagnostics only).
    pub fn text(&self, s: &str) -> Result<(), Error> {
        if self.human() {
            super::write_stdout(s.as_bytes())
        } else {
            eprint!("{s}");
            Ok(())
        }
    }

    /// Prints a diagnostic (nothing in the human format, whose text the verb prints itself).
    pub fn emit(&self, d: &Diag) -> Result<(), Error> {
        let line = match self.format {
            MessageFormat::Human => return Ok(()),
            MessageFormat::Github => d.github(),
            MessageFormat::Json => d.json(),
        };
        super::write_stdout(format!("{line}\n").as_bytes())
    }

    /// `path` as the diagnostics name it: relative to the base when under it, with `/`.
    pub fn path(&self, path: &Path) -> String {
        // A file that does not exist (a generated file not written yet): its directory.
        let full = path.canonicalize().ok().or_else(|| {
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            Some(parent.canonicalize().ok()?.join(path.file_name()?))
        });
        let shown = match (full, &self.base) {
            (Some(f), Some(b)) => f.strip_prefix(b).map(Path::to_path_buf).unwrap_or(f),
            (Some(f), None) => f,
            (None, _) => path.to_path_buf(),
        };
        shown.display().to_string().replace('\\', "/")
    }

    /// Every diagnostic of a schema that does not compile.
    pub fn schema_error(&self, e: &SchemaError) -> Result<(), Error> {
        for d in &e.diagnostics {
            let (line, column) = d.line_col(&e.source);
            // The start of the span's last character (the start itself for an empty span).
            let (start, end) = (d.span.start.min(e.source.len()), d.span.end.min(e.source.len()));
            let last = e.source.get(start..end).and_then(|s| s.char_indices().last()).map_or(start, |(i, _)| start + i);
            let (end_line, end_column) = logspec::ir::diag::line_col(&e.source, last);
            let mut message = d.message.clone();
            if let Some(label) = &d.label {
                message.push('\n');
                message.push_str(label);
            }
            if let Some(help) = &d.help {
                message.push_str("\nhelp: ");
                message.push_str(help);
            }
            self.emit(&Diag {
                level: Level::Error,
                code: Some(d.code.as_str()),
                file: e.path.clone(),
                line: Some(line),
                column: Some(column),
                end_line: Some(end_line),
                end_column: Some(end_column),
                title: format!("schema error {}", d.code),
                message,
            })?;
        }
        Ok(())
    }

    /// In the machine formats, compiles every schema of the project first and prints the
    /// diagnostics of those that do not compile; true if one did not. (The human format reports
    /// them as the verbs always did, as an error message.)
    pub fn schema_errors(&self, project: &Project) -> Result<bool, Error> {
        if self.human() {
            return Ok(false);
        }
        let mut failed = false;
        for p in super::schema_paths(&project.schemas)? {
            let shown = self.path(&p);
            let source = std::fs::read_to_string(&p).map_err(|e| Error::Input(format!("{shown}: {e}")))?;
            if let Err(e) = logspec::codegen::compile_str(&shown, &source) {
                self.schema_error(&e)?;
                failed = true;
            }
        }
        Ok(failed)
    }

    /// One diagnostic per breaking change of an unbumped schema, at the record's line of the
    /// schema when it is found there.
    pub fn breaking(&self, level: Level, schema_path: &Path, changes: &[Change], fix: &str) -> Result<(), Error> {
        let source = std::fs::read_to_string(schema_path).unwrap_or_default();
        let file = self.path(schema_path);
        for c in changes.iter().filter(|c| c.verdict == lock::Verdict::Breaking) {
            let mut d = Diag::file(level, file.clone(), BREAKING, format!("{}; {fix}", c.message));
            d.line = record_line(&source, &c.record);
            self.emit(&d)?;
        }
        Ok(())
    }
}

/// The 1-based line of a record's `name = "…"` in a schema's text, if it is there.
pub fn record_line(source: &str, record: &str) -> Option<usize> {
    let needle = format!("name=\"{record}\"");
    source.lines().position(|l| l.replace([' ', '\t'], "").contains(&needle)).map(|i| i + 1)
}

/// The 1-based line of the file on disk (`old`) where it first differs from `new`; the last line
/// when the file on disk is a beginning of the new one; `None` when they are equal.
pub fn first_difference(old: &str, new: &str) -> Option<usize> {
    let (mut a, mut b) = (old.split_inclusive('\n'), new.split_inclusive('\n'));
    let mut line = 1;
    loop {
        match (a.next(), b.next()) {
            (None, None) => return None,
            (x, y) if x == y => line += 1,
            (None, _) => return Some((line - 1).max(1)),
            _ => return Some(line),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_escapes_as_the_toolkit_does() {
        let d = Diag {
            level: Level::Warning,
            code: None,
            file: "a,b:c.toml".into(),
            line: Some(3),
            column: None,
            end_line: None,
            end_column: None,
            title: "x: y, z".into(),
            message: "100% sure\r\nnext: a, b".into(),
        };
        assert_eq!(d.github(), "::warning file=a%2Cb%3Ac.toml,line=3,title=x%3A y%2C z::100%25 sure%0D%0Anext: a, b");
    }

    #[test]
    fn json_has_every_key() {
        let mut d = Diag::file(Level::Error, "s.toml".into(), "t", "m \"q\"\n".into());
        d.code = Some("E0101");
        assert_eq!(
            d.json(),
            r#"{"level":"error","code":"E0101","file":"s.toml","line":null,"column":null,"end_line":null,"end_column":null,"title":"t","message":"m \"q\"\n"}"#
        );
    }

    #[test]
    fn first_differing_line() {
        assert_eq!(first_difference("a\nb\n", "a\nb\n"), None);
        assert_eq!(first_difference("a\nb\nc\n", "a\nX\nc\n"), Some(2));
        assert_eq!(first_difference("a\n", "a\nb\n"), Some(1));
        assert_eq!(first_difference("a\nb\n", "a\n"), Some(2));
        assert_eq!(first_difference("", "a\n"), Some(1));
        assert_eq!(first_difference("a", "a\n"), Some(1));
    }

    #[test]
    fn record_lines() {
        let s = "[[record]]\nname = \"REC_A\"\nid = 1\n[[record]]\nname=\"REC_B\"\n";
        assert_eq!(record_line(s, "REC_B"), Some(5));
        assert_eq!(record_line(s, "REC_C"), None);
    }
}
