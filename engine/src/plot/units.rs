//! The unit of a plotted column where the log gives none: from an AdvantageKit-style name
//! (`GyroAngleDegrees`) or from the documented units of common ROS messages.

/// Units that names say, as AdvantageKit's and WPILib's conventions write them at the end of a
/// name (`GyroAngleDegrees`, `turnPositionRad`, `BatteryVoltage`, `WheelVelocityMetersPerSec`):
/// longer suffixes first.
const NAME_UNITS: [(&str, &str); 21] = [
    ("RadiansPerSecond", "rad/s"),
    ("DegreesPerSecond", "deg/s"),
    ("MetersPerSecond", "m/s"),
    ("MetersPerSec", "m/s"),
    ("RadsPerSec", "rad/s"),
    ("RadPerSec", "rad/s"),
    ("DegPerSec", "deg/s"),
    ("Rotations", "rot"),
    ("Radians", "rad"),
    ("Degrees", "deg"),
    ("Celsius", "°C"),
    ("Seconds", "s"),
    ("Voltage", "V"),
    ("Meters", "m"),
    ("Volts", "V"),
    ("Amps", "A"),
    ("Rads", "rad"),
    ("Secs", "s"),
    ("Rad", "rad"),
    ("Deg", "deg"),
    ("RPM", "rpm"),
];

/// The unit a channel's name says, for the formats whose logs carry no units (RLOG, WPILOG, ROS
/// bags): the last part of the column (or of the channel's name, for its only value) ending in a
/// suffix of [`NAME_UNITS`] that starts a word (the whole part, or after a lower-case letter, a
/// digit, a space or `_`).
pub(super) fn unit_of_name(channel: &str, column: &str) -> Option<&'static str> {
    let head = column.split('[').next().unwrap_or(column);
    let name = if head.is_empty() || head == "value" { channel } else { column };
    let last = name.rsplit(['/', '.']).next().unwrap_or(name);
    let last = last.split('[').next().unwrap_or(last);
    NAME_UNITS.iter().find_map(|(suffix, unit)| {
        let head = last.strip_suffix(suffix)?;
        let starts_word =
            head.chars().last().is_none_or(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == ' ' || c == '_');
        starts_word.then_some(*unit)
    })
}

/// The units of fields of common ROS messages, as their definitions' comments and REP 103
/// (standard units of measure) give them: (message type, field path, unit). A field path covers
/// the fields under it (`linear_acceleration` covers `linear_acceleration.z`).
const ROS_UNITS: [(&str, &str, &str); 27] = [
    ("sensor_msgs/Imu", "angular_velocity", "rad/s"),
    ("sensor_msgs/Imu", "linear_acceleration", "m/s^2"),
    ("sensor_msgs/NavSatFix", "latitude", "deg"),
    ("sensor_msgs/NavSatFix", "longitude", "deg"),
    ("sensor_msgs/NavSatFix", "altitude", "m"),
    ("sensor_msgs/Temperature", "temperature", "°C"),
    ("sensor_msgs/FluidPressure", "fluid_pressure", "Pa"),
    ("sensor_msgs/MagneticField", "magnetic_field", "T"),
    ("sensor_msgs/Range", "range", "m"),
    ("sensor_msgs/Range", "min_range", "m"),
    ("sensor_msgs/Range", "max_range", "m"),
    ("sensor_msgs/BatteryState", "voltage", "V"),
    ("sensor_msgs/BatteryState", "current", "A"),
    ("sensor_msgs/BatteryState", "temperature", "°C"),
    ("sensor_msgs/BatteryState", "charge", "Ah"),
    ("sensor_msgs/BatteryState", "capacity", "Ah"),
    ("geometry_msgs/Twist", "linear", "m/s"),
    ("geometry_msgs/Twist", "angular", "rad/s"),
    ("geometry_msgs/TwistStamped", "twist.linear", "m/s"),
    ("geometry_msgs/TwistStamped", "twist.angular", "rad/s"),
    ("geometry_msgs/Pose", "position", "m"),
    ("geometry_msgs/PoseStamped", "pose.position", "m"),
    ("geometry_msgs/Point", "", "m"),
    ("geometry_msgs/PointStamped", "point", "m"),
    ("nav_msgs/Odometry", "pose.pose.position", "m"),
    ("nav_msgs/Odometry", "twist.twist.linear", "m/s"),
    ("nav_msgs/Odometry", "twist.twist.angular", "rad/s"),
];

/// The unit of a column of a ROS message of type `ty` ([`ROS_UNITS`]).
pub(super) fn unit_of_ros_field(ty: &str, column: &str) -> Option<&'static str> {
    let column = column.split('[').next().unwrap_or(column);
    ROS_UNITS.iter().find_map(|(t, path, unit)| {
        let under =
            path.is_empty() || column.strip_prefix(path).is_some_and(|rest| rest.is_empty() || rest.starts_with('.'));
        (*t == ty && under && !column.is_empty()).then_some(*unit)
    })
}
