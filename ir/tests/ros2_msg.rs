//! The ROS 2 dialect of the `.msg` front end: what it accepts beyond ROS1 (bounded types,
//! defaults, `#` inside quotes, `pkg/msg/Type` names, repeated dependency sections), what it
//! refuses with a clear error (`wstring`, services), and the IR it lowers to for CDR (the
//! layout rules, `byte` unsigned, one byte of padding for an empty message, the byte order
//! asked for). Expectations are written from the ROS 2 `.msg` grammar and CDR, not from the
//! front end's output.

use logspec_ir::ir::{Endian, Len, Prim, Rules, Ty, TypeDef};
use logspec_ir::ros::{compile_ros2_definition, lower, ros2_name};

const SEP: &str = "================================================================================";

fn text() -> String {
    [
        "# a comment with a quote ' in it",
        "byte B",
        "char c",
        "string<=8 bounded  # bounded string",
        "float32[<=4] few",
        "int32[3] three",
        "string s \"a # not a comment\"  # but this is",
        "int64 with_default 42",
        "string GREETING=hello # world",
        "uint8 FIVE=5",
        "builtin_interfaces/Time stamp",
        "Empty[] empties",
        SEP,
        "MSG: builtin_interfaces/Time",
        "int32 sec",
        "uint32 nanosec",
        SEP,
        "MSG: demo_msgs/msg/Empty",
        SEP,
        // A dependency repeated, as older rosbag2 and the Go writer leave it.
        "MSG: builtin_interfaces/Time",
        "int32 sec",
        "uint32 nanosec",
    ]
    .join("\n")
}

#[test]
fn names_in_either_form_are_one_type() {
    assert_eq!(ros2_name("std_msgs/msg/String"), "std_msgs/String");
    assert_eq!(ros2_name("std_msgs/String"), "std_msgs/String");
    assert_eq!(ros2_name("String"), "String");
}

#[test]
fn the_ros2_grammar_parses_and_lowers_for_cdr() {
    let set = compile_ros2_definition("t.msg", "demo_msgs/msg/Demo", &text()).expect("compiles");
    let spec = set.get("demo_msgs/Demo").expect("the root, keyed pkg/Type");
    let fields: Vec<&str> = spec.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(fields, ["B", "c", "bounded", "few", "three", "s", "with_default", "stamp", "empties"]);
    let consts: Vec<(&str, &str)> = spec.constants.iter().map(|c| (c.name.as_str(), c.value.as_str())).collect();
    assert_eq!(consts, [("GREETING", "hello # world"), ("FIVE", "5")]);
    for endian in [Endian::Little, Endian::Big] {
        let l = lower::lower_cdr(&set, &["demo_msgs/Demo"], "t", endian);
        assert_eq!(l.schema.format.rules, Rules::CDR);
        let TypeDef::Struct(s) = l.schema.ty(l.ids["demo_msgs/Demo"]) else { panic!() };
        let ty = |n: &str| &s.fields.iter().find(|f| f.name == n).unwrap().ty;
        assert_eq!(ty("B"), &Ty::Prim(Prim::U8), "ROS 2 byte is an octet");
        assert_eq!(ty("c"), &Ty::Prim(Prim::U8));
        assert_eq!(ty("bounded"), &Ty::Str(Len::Count(Prim::U32)));
        assert_eq!(ty("few"), &Ty::Array { elem: Box::new(Ty::Prim(Prim::F32)), len: Len::Count(Prim::U32) });
        assert_eq!(ty("three"), &Ty::Array { elem: Box::new(Ty::Prim(Prim::I32)), len: Len::Fixed(3) });
        assert!(s.fields.iter().all(|f| f.endian == endian));
        // Under natural alignment nothing after the first multi-byte field has a fixed place.
        assert_eq!(s.size, None);
        let TypeDef::Struct(e) = l.schema.ty(l.ids["demo_msgs/Empty"]) else { panic!() };
        assert_eq!(e.fields.len(), 1);
        assert_eq!(e.fields[0].ty, Ty::Pad(1), "rosidl's structure_needs_at_least_one_member");
        assert_eq!(e.size, Some(1));
    }
}

#[test]
fn what_cannot_be_decoded_is_refused_clearly() {
    for (def, what) in [
        ("wstring w", "`wstring` is not supported"),
        ("wstring<=5 w", "`wstring<=5` is not supported"),
        ("int32 a\n---\nint32 b", "a service or action definition (`---`) is not a message"),
        ("int32<=3 a", "is not a valid type"),
        ("string[<=x] a", "is not a valid field type"),
    ] {
        let errs = compile_ros2_definition("t.msg", "p/msg/T", def).expect_err(def);
        let text: String = errs.iter().map(|e| e.render()).collect();
        assert!(text.contains(what), "{def}: {text}");
    }
    // `time` is no builtin in ROS 2: a type of the package, which this definition lacks.
    let errs = compile_ros2_definition("t.msg", "p/msg/T", "time t").expect_err("time");
    assert!(errs.iter().map(|e| e.render()).collect::<String>().contains("unknown message type `time`"));
}
