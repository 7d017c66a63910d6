//! The ROS `.msg` front end: golden diagnostics for invalid definitions
//! (`tests/invalid_msg/<name>.msg`, parsed as the `message_definition` of `demo/Bad`, first line
//! `# expect: E....`), genmsg md5 quirks, the IR it lowers to, and a snapshot of the Rust types
//! generated from `tests/msg` (compiled and run by the root crate's `tests/it/rosbag.rs` on the
//! bags' own definitions). Accept changed snapshots with
//! `INSTA_UPDATE=always cargo test -p logspec-codegen --test msg` and review the diff.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use logspec_codegen::ros::{self, lower, md5::md5};
use logspec_ir::ir::{Len, Prim, Ty, TypeDef};

#[test]
fn invalid_definitions() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/invalid_msg");
    let mut files: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(files.len() >= 9);
    for p in files {
        let name = p.file_stem().unwrap().to_str().unwrap().to_string();
        let text = fs::read_to_string(&p).unwrap();
        let want: BTreeSet<String> = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# expect:"))
            .unwrap_or_else(|| panic!("{name}: first line must be `# expect: E....`"))
            .split([' ', ','])
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let path = format!("tests/invalid_msg/{name}.msg");
        let errs = match ros::compile_definition(&path, "demo/Bad", &text) {
            Ok(_) => panic!("{path} compiled, but it is meant to be invalid"),
            Err(e) => e,
        };
        let got: BTreeSet<String> =
            errs.iter().flat_map(|e| &e.diagnostics).map(|d| d.code.as_str().to_string()).collect();
        let rendered: String = errs.iter().map(|e| e.render()).collect();
        assert_eq!(got, want, "{path}:\n{rendered}");
        let mut settings = insta::Settings::clone_current();
        settings.set_omit_expression(true);
        settings.bind(|| insta::assert_snapshot!(name, rendered));
    }
}

fn set(defs: &[(&str, &str)]) -> ros::MsgSet {
    let mut s = ros::MsgSet::default();
    for (name, text) in defs {
        s.add_definition(name, name, text).unwrap();
    }
    s.resolve().unwrap();
    s
}

/// The quirks of genmsg's md5 listed in the spec (§5), which genmsg itself shows.
#[test]
fn md5_quirks() {
    let point = ("geometry_msgs/Point", "float64 x\nfloat64 y\nfloat64 z");
    let h = |field: &str| md5(&set(&[point, ("a/M", field)]), "a/M").unwrap();
    // A nested message field's array suffix is dropped.
    assert_eq!(h("geometry_msgs/Point p"), h("geometry_msgs/Point[] p"));
    assert_eq!(h("geometry_msgs/Point p"), h("geometry_msgs/Point[3] p"));
    // A builtin's is not.
    assert_ne!(h("float64 p"), h("float64[] p"));
    // Aliases hash under their own names.
    assert_ne!(h("byte p"), h("int8 p"));
    assert_ne!(h("char p"), h("uint8 p"));
    // Comments and whitespace do not count; constant values and field names do.
    assert_eq!(h("int32 A=1\nint32 p"), h("# doc\nint32   A = 1  # one\n\n  int32 p # the p"));
    assert_ne!(h("int32 A=1\nint32 p"), h("int32 A=2\nint32 p"));
    assert_ne!(h("int32 p"), h("int32 q"));
    // The package of a nested type does not count.
    let other = ("other/Point", point.1);
    assert_eq!(h("geometry_msgs/Point p"), md5(&set(&[other, ("a/M", "other/Point p")]), "a/M").unwrap());
    // std_msgs/Empty.
    assert_eq!(md5(&set(&[("std_msgs/Empty", "")]), "std_msgs/Empty").unwrap(), "d41d8cd98f00b204e9800998ecf8427e");
}

/// A `message_definition` blob: sections, `Header`, and names resolved in the section's package.
#[test]
fn definition_blobs_resolve_like_genmsg() {
    let sep = "=".repeat(80);
    let text = format!(
        "Header header\nPose pose\n{sep}\nMSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n{sep}\nMSG: geometry_msgs/Pose\nPoint position\n{sep}\nMSG: geometry_msgs/Point\nfloat64 x\nfloat64 y\nfloat64 z"
    );
    let s = ros::compile_definition("blob", "geometry_msgs/PoseLike", &text).unwrap();
    let names: Vec<&str> = s.types.keys().map(String::as_str).collect();
    assert_eq!(names, ["geometry_msgs/Point", "geometry_msgs/Pose", "geometry_msgs/PoseLike", "std_msgs/Header"]);
    assert_eq!(md5(&s, "std_msgs/Header").unwrap(), "2176decaecbce78abc3b96ef049fabed");
}

/// The IR: little-endian packed structs, u32 prefixes, time/duration structs, byte/char.
#[test]
fn lowering() {
    let s = ros::compile_msg_files(&msg_files()).unwrap();
    let l = lower::lower(&s, &["demo/Sample"], "demo", None);
    let TypeDef::Struct(sample) = l.schema.ty(l.ids["demo/Sample"]) else { panic!() };
    let ty = |n: &str| sample.fields.iter().find(|f| f.name == n).unwrap().ty.clone();
    assert_eq!(ty("raw"), Ty::Prim(Prim::I8));
    assert_eq!(ty("letter"), Ty::Prim(Prim::U8));
    assert_eq!(ty("blob"), Ty::Array { elem: Box::new(Ty::Prim(Prim::U8)), len: Len::Count(Prim::U32) });
    assert_eq!(ty("labels"), Ty::Array { elem: Box::new(Ty::Str(Len::Count(Prim::U32))), len: Len::Count(Prim::U32) });
    assert!(matches!(ty("position"), Ty::Array { len: Len::Fixed(3), .. }));
    let TypeDef::Struct(point) = l.schema.ty(l.ids["demo/Point"]) else { panic!() };
    assert_eq!(point.size, Some(8));
    let header = l.schema.strukt(l.ids["std_msgs/Header"]);
    assert_eq!(header.fields[1].offset, Some(4));
    assert_eq!(l.schema.size_of(&header.fields[1].ty), Some(8));
    assert_eq!(header.size, None);
}

fn msg_files() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/msg");
    let mut v = Vec::new();
    for pkg in fs::read_dir(&root).unwrap() {
        for f in fs::read_dir(pkg.unwrap().path().join("msg")).unwrap() {
            v.push(f.unwrap().path());
        }
    }
    v.sort();
    v
}

#[test]
fn generated_rust_snapshot() {
    let s = ros::compile_msg_files(&msg_files()).unwrap();
    let roots: Vec<&str> = s.types.keys().map(String::as_str).collect();
    let source = ros::rust::source(&s, &roots, "demo", "::logspec_runtime", Some("tests/msg".into()));
    assert!(!source.contains("compile_error!"), "{source}");
    insta::assert_snapshot!("rust_demo_msgs", source);
}
