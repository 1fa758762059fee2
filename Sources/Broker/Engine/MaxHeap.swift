/// A binary max-heap: `SEARCH` merges the matches of many conversations,
/// newest first, taking the newest candidate of all in O(log n).
struct MaxHeap<Element: Comparable> {
  private var elements: [Element] = []

  init() {}

  var isEmpty: Bool { elements.isEmpty }
  var count: Int { elements.count }

  mutating func push(_ element: Element) {
    elements.append(element)
    var child = elements.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      guard elements[parent] < elements[child] else { break }
      elements.swapAt(parent, child)
      child = parent
    }
  }

  /// Takes the largest element off, or nil when empty.
  mutating func popMax() -> Element? {
    guard !elements.isEmpty else { return nil }
    elements.swapAt(0, elements.count - 1)
    let largest = elements.removeLast()
    var parent = 0
    while true {
      let left = 2 * parent + 1
      let right = left + 1
      var largestChild = parent
      if left < elements.count && elements[largestChild] < elements[left] { largestChild = left }
      if right < elements.count && elements[largestChild] < elements[right] {
        largestChild = right
      }
      guard largestChild != parent else { break }
      elements.swapAt(parent, largestChild)
      parent = largestChild
    }
    return largest
  }
}
