fn main() {
    println!("hello from {}", env!("CARGO_PKG_NAME"));
}
