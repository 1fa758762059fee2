import TestSupport
import Testing

@testable import Broker

@Suite("FIFO queue")
struct FIFOQueueTests {
  private final class Box {
    let value: Int
    init(_ value: Int) { self.value = value }
  }

  @Test("elements leave in the order they joined, one per pop, as the server's turns take them")
  func firstInFirstOut() {
    var queue = FIFOQueue<Box>()
    #expect(queue.isEmpty && queue.popFirst() == nil && queue.popLast() == nil)
    for value in 0..<5 { queue.append(Box(value)) }
    #expect(queue.count == 5 && queue.first?.value == 0 && queue.last?.value == 4)
    #expect(queue.popFirst()?.value == 0)
    #expect(queue.popFirst()?.value == 1)
    queue.append(Box(5))
    #expect(queue.map(\.value) == [2, 3, 4, 5])
    #expect(queue[0].value == 2 && queue[3].value == 5)
    #expect(queue.popLast()?.value == 5)
    queue.prepend(Box(1))
    #expect(queue.map(\.value) == [1, 2, 3, 4])
    queue.removeFirst(3)
    #expect(queue.map(\.value) == [4])
    #expect(queue.removeFirst().value == 4)
    #expect(queue.isEmpty && queue.popFirst() == nil)
  }

  @Test("emptied, it gives back every slot at once")
  func emptiedQueueResets() {
    var queue = FIFOQueue<Int>()
    for value in 0..<10 { queue.append(value) }
    for _ in 0..<9 { queue.removeFirst() }
    #expect(queue.slotsInUse == 10, "below the threshold the dead slots stay")
    queue.removeFirst()
    #expect(queue.slotsInUse == 0)
    for value in 0..<10 { queue.append(value) }
    queue.removeFirst(10)
    #expect(queue.slotsInUse == 0)
    queue.append(1)
    queue.removeLast()
    #expect(queue.slotsInUse == 0)
  }

  @Test("dead slots are given back once there are trimThreshold of them and as many as live ones")
  func trimmingThreshold() {
    let threshold = FIFOQueue<Int>.trimThreshold
    #expect(threshold == 64)
    // Many live elements: dead slots stay until they are as many.
    var long = FIFOQueue<Int>()
    for value in 0..<(4 * threshold) { long.append(value) }
    for _ in 0..<(2 * threshold - 1) { long.removeFirst() }
    #expect(long.slotsInUse == 4 * threshold, "fewer dead than live")
    long.removeFirst()
    #expect(long.slotsInUse == 2 * threshold, "as many dead as live: moved to the front")
    #expect(long.first == 2 * threshold && long.last == 4 * threshold - 1)
    // Few live elements: dead slots stay until there are trimThreshold.
    var short = FIFOQueue<Int>()
    for value in 0..<(threshold + 1) { short.append(value) }
    short.removeFirst(threshold - 1)
    #expect(short.slotsInUse == threshold + 1, "fewer dead slots than the threshold")
    short.removeFirst()
    #expect(short.slotsInUse == 1 && short.first == threshold)
  }

  @Test("a class reference taken off the front is released by the trim that follows")
  func releasesReferences() {
    var queue = FIFOQueue<Box>()
    weak var taken: Box?
    do {
      let box = Box(0)
      taken = box
      queue.append(box)
    }
    queue.append(Box(1))
    _ = queue.popFirst()
    #expect(taken != nil, "still in its dead slot")
    _ = queue.popFirst()
    #expect(taken == nil)
  }

  @Test("random appends, pops and prepends do what they do to a plain array", arguments: 0..<4)
  func matchesAnArray(seed: UInt64) {
    var random = SeededGenerator(seed: 0xF1F0 + seed)
    var queue = FIFOQueue<Int>()
    var array: [Int] = []
    var next = 0
    var largest = 0
    // The first step where the queue and the array differ, or where more
    // slots are dead than the threshold and the live elements allow: one
    // expectation at the end, not thousands.
    var firstMismatch: Int?
    for step in 0..<10_000 where firstMismatch == nil {
      // Phases that grow and phases that shrink, so that both trims happen.
      let growing = (step / 1000) % 2 == 0
      let roll = Int.random(in: 0..<20, using: &random)
      var same = true
      if roll < (growing ? 12 : 6) {
        queue.append(next)
        array.append(next)
        next += 1
      } else if roll < 15 {
        same = queue.popFirst() == (array.isEmpty ? nil : array.removeFirst())
      } else if roll < 17 {
        same = queue.popLast() == array.popLast()
      } else if roll < 18 {
        let k = Int.random(in: 0...min(array.count, growing ? 4 : 100), using: &random)
        queue.removeFirst(k)
        array.removeFirst(k)
      } else {
        queue.prepend(-next)
        array.insert(-next, at: 0)
        next += 1
      }
      largest = max(largest, array.count)
      same =
        same && queue.count == array.count && queue.first == array.first
        && queue.last == array.last
        && queue.slotsInUse - queue.count < max(FIFOQueue<Int>.trimThreshold, queue.count)
        && (step % 97 != 0 || queue.elementsEqual(array))
      if !same { firstMismatch = step }
    }
    #expect(firstMismatch == nil)
    #expect(Array(queue) == array)
    #expect(largest > 2 * FIFOQueue<Int>.trimThreshold)
  }
}
