//! Compiles the codegen test schemas so that the test suite compiles and exercises what the Rust
//! back end emits for every feature. (The bundled schemas are compiled by `logspec/build.rs`, the
//! library's.) The CLI itself includes nothing from here: in a package without the test data
//! (`cargo install`), there is nothing to compile.

fn main() {
    if !std::path::Path::new("codegen/tests/schemas/everything.toml").is_file() {
        return;
    }
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("test_schemas");
    std::fs::create_dir_all(&out).expect("create OUT_DIR/test_schemas");
    let test_schemas = [
        "codegen/tests/schemas/everything.toml",
        "codegen/tests/schemas/c_all_kinds.toml",
        "codegen/tests/schemas/checked.toml",
        "codegen/tests/schemas/cdr.toml",
    ];
    logspec_codegen::Builder::new().out_dir(&out).compile(&test_schemas).unwrap_or_else(|e| e.exit());
    // The `.msg` definitions of the ROS test bags, for the differential test of tests/it/rosbag.rs.
    let mut msgs = Vec::new();
    msg_files(std::path::Path::new("tests/data/rosbag/msg"), &mut msgs);
    msgs.sort();
    println!("cargo:rerun-if-changed=tests/data/rosbag/msg");
    logspec_codegen::Builder::new()
        .out_dir(&out)
        .runtime_path("::logspec::runtime")
        .compile_msgs("ros_test", &msgs)
        .unwrap_or_else(|e| e.exit());
    // ROS 2 `.msg` definitions as CDR types (`test_msgs/msg/BasicTypes` of the rosbag2 test bags),
    // for tests/it/rosbag2.rs: the Builder's ROS 2 input under CDR's layout rules.
    println!("cargo:rerun-if-changed=tests/data/ros2/msg");
    let mut ros2 = Vec::new();
    msg_files(std::path::Path::new("tests/data/ros2/msg"), &mut ros2);
    ros2.sort();
    logspec_codegen::Builder::new()
        .out_dir(&out)
        .runtime_path("::logspec::runtime")
        .compile_ros2_msgs("ros2_test", &ros2)
        .unwrap_or_else(|e| e.exit());
    // WPILib struct schemas (the `Custom` struct of tests/data/wpilog), for tests/it/wpistruct.rs.
    logspec_codegen::Builder::new()
        .out_dir(&out)
        .runtime_path("::logspec::runtime")
        .compile_struct_schemas(
            "wpistruct_test",
            &[
                (
                    "Custom",
                    "enum{idle=0,run=1,fault=7}uint8 state;int8 a:3;int8 b:4;bool flag:1;uint16 c:5;uint16 d:11;\
                     bool e:1;bool f:1;int32 i32;uint32 u32;int64 i64;uint64 u64;float f32;double f64;Inner inner;\
                     Inner pair[2];bool ok",
                ),
                ("Inner", "int16 id;char tag[8]"),
            ],
        )
        .unwrap_or_else(|e| e.exit());
    // A ROS 2 message as an MCAP file carries it (`ros2msg`, with its `===` sections), lowered
    // for CDR in each byte order, for tests/it/cdr.rs: the Rust back end under CDR's layout rules.
    println!("cargo:rerun-if-changed=tests/data/ros2/msg/Corner.ros2msg");
    let text = std::fs::read_to_string("tests/data/ros2/msg/Corner.ros2msg").expect("Corner.ros2msg");
    let name = "logspec_test_msgs/msg/Corner";
    let set = logspec_codegen::ros::compile_ros2_definition("Corner.ros2msg", name, &text)
        .unwrap_or_else(|e| panic!("Corner.ros2msg: {e:?}"));
    let backend =
        logspec_codegen::backend::rust::RustBackend { runtime_path: "::logspec::runtime".to_string(), alloc: true };
    for (file, endian) in
        [("ros2_corner_le.rs", logspec_ir::ir::Endian::Little), ("ros2_corner_be.rs", logspec_ir::ir::Endian::Big)]
    {
        let lowered =
            logspec_codegen::ros::lower::lower_cdr(&set, &["logspec_test_msgs/Corner"], "ros2_corner", endian);
        logspec_codegen::backend::supported(&lowered.schema).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(out.join(file), backend.source(&lowered.schema)).expect("write ROS 2 test types");
    }
    // A schema bumped to schema id 2 whose lock keeps schema id 1: the reader of older layouts.
    let history = out.join("history");
    std::fs::create_dir_all(&history).expect("create OUT_DIR/test_schemas/history");
    logspec_codegen::Builder::new()
        .out_dir(history)
        .runtime_path("::logspec::runtime")
        .compile(&["tests/data/history/usvlog.toml"])
        .unwrap_or_else(|e| e.exit());
}

/// Every `.msg` file under `dir`.
fn msg_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            msg_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "msg") {
            out.push(p);
        }
    }
}
